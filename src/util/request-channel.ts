/**
 * @module util/request-channel
 * Calls to a peer process over newline-delimited JSON, each with an id and answered by one
 * reply with the same id. Nothing the peer sends is trusted: every line is bounded in length,
 * parsed, and checked by the owner's validator before it settles a call; a line out of protocol
 * (not JSON, not valid, an id nobody waits for, or refused by the call's own check) closes the
 * channel. When the channel closes (the peer died, its output ended, or it spoke out of
 * protocol) every call still waiting is rejected with the reason, so no caller waits forever.
 */
import { LineSplitter } from './line-splitter.ts'

/** What the owner's validator makes of one parsed line. */
export type ChannelLine<Reply, Notice> =
  { readonly id: number; readonly reply: Reply } | { readonly notice: Notice }

/** How a channel is built. */
export interface RequestChannelOptions<Reply, Notice> {
  /** Writes one line (the newline included) to the peer. */
  readonly write: (line: string) => void
  /**
   * Checks one parsed line (`JSON.parse` of untrusted text: `unknown`) and says what it is;
   * undefined when it is out of protocol.
   */
  readonly parse: (value: unknown) => ChannelLine<Reply, Notice> | undefined
  /** Lines that are not replies (a ready line, an event). */
  readonly onNotice?: ((notice: Notice) => void) | undefined
  /** Called once when the channel closes, with why. */
  readonly onClose?: ((reason: string, outOfProtocol: boolean) => void) | undefined
  /** Longest line accepted, in bytes; may change later through `lineLimit`. */
  readonly maxLineBytes: number
  /** Who the peer is, in messages. @default 'the peer' */
  readonly peer?: string | undefined
  /** The error pending calls are rejected with. @default an `Error` with the reason */
  readonly closedError?: ((reason: string) => Error) | undefined
}

/** One call's own check of its reply: a message when the reply is out of protocol. */
export type ReplyCheck<Reply> = (reply: Reply) => string | undefined

interface Pending<Reply> {
  readonly resolve: (reply: Reply) => void
  readonly reject: (error: Error) => void
  readonly check: ReplyCheck<Reply> | undefined
}

/** A typed request/reply channel to one peer (see the module comment). */
export class RequestChannel<Request extends object, Reply, Notice = never> {
  readonly #options: RequestChannelOptions<Reply, Notice>
  readonly #lines: LineSplitter
  readonly #pending = new Map<number, Pending<Reply>>()
  readonly #peer: string
  #nextId = 1
  #closed: string | undefined

  constructor(options: RequestChannelOptions<Reply, Notice>) {
    this.#options = options
    this.#peer = options.peer ?? 'the peer'
    this.#lines = new LineSplitter(options.maxLineBytes, {
      line: (line) => this.#receive(line),
      overflow: (bytes) =>
        this.#close(
          `a line of the peer was over ${this.#lines.limit} bytes (${bytes} so far)`,
          true,
        ),
    })
  }

  /** Why the channel closed; undefined while it is open. */
  get closedReason(): string | undefined {
    return this.#closed
  }

  /** Calls waiting for their reply. */
  get pendingCount(): number {
    return this.#pending.size
  }

  /** Longest line accepted now, in bytes. */
  get lineLimit(): number {
    return this.#lines.limit
  }

  set lineLimit(bytes: number) {
    this.#lines.limit = bytes
  }

  /**
   * Sends `request` with a fresh id (`{ id, ...request }`) and resolves with the reply of that
   * id. Rejects when the channel closes first (or is closed already). `check` vets the reply
   * against what this call may get; a reply it refuses closes the channel.
   */
  call(request: Request, check?: ReplyCheck<Reply>, onSent?: (id: number) => void): Promise<Reply> {
    if (this.#closed !== undefined) return Promise.reject(this.#error(this.#closed))
    const id = this.#nextId++
    const reply = new Promise<Reply>((resolve, reject) =>
      this.#pending.set(id, { resolve, reject, check }),
    )
    this.#options.write(`${JSON.stringify({ id, ...request })}\n`)
    onSent?.(id)
    return reply
  }

  /** Sends a line that wants no reply (a cancel); nothing once closed. */
  notify(message: object): void {
    if (this.#closed === undefined) this.#options.write(`${JSON.stringify(message)}\n`)
  }

  /** Feeds bytes the peer wrote. */
  push(chunk: Buffer): void {
    if (this.#closed === undefined) this.#lines.push(chunk)
  }

  /** Closes the channel: every waiting call is rejected with `reason`. Idempotent. */
  close(reason: string): void {
    this.#close(reason, false)
  }

  #receive(line: string): void {
    if (this.#closed !== undefined) return
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      return this.#close(`${this.#peer} sent a line that is not JSON`, true)
    }
    const parsed = this.#options.parse(value)
    if (parsed === undefined) return this.#close(`${this.#peer} sent a line out of protocol`, true)
    if ('notice' in parsed) return this.#options.onNotice?.(parsed.notice)
    const pending = this.#pending.get(parsed.id)
    if (pending === undefined)
      return this.#close(`${this.#peer} answered call ${parsed.id}, which is not waiting`, true)
    const refused = pending.check?.(parsed.reply)
    if (refused !== undefined) return this.#close(refused, true)
    this.#pending.delete(parsed.id)
    pending.resolve(parsed.reply)
  }

  #close(reason: string, outOfProtocol: boolean): void {
    if (this.#closed !== undefined) return
    this.#closed = reason
    this.#lines.stop()
    this.#options.onClose?.(reason, outOfProtocol)
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id)
      pending.reject(this.#error(reason))
    }
  }

  #error(reason: string): Error {
    return this.#options.closedError?.(reason) ?? new Error(reason)
  }
}
