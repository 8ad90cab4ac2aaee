/**
 * @module eval/host/sandbox-process
 * The process that hosts the isolates, seen from the server: started with the server's own
 * Node, `--no-node-snapshot` (isolated-vm needs it) and an empty environment (no secret of the
 * server's is ever in it), spoken to in JSON lines: the server writes to its stdin, it answers
 * on fd 3. Every line from it is bounded in length and validated before use, since the guest
 * code it runs is the least trusted thing on the machine; a line out of protocol ends it.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import type { Readable, Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { EitriError } from '../../errors/eitri-error.ts'
import { LineSplitter } from '../../util/line-splitter.ts'
import { MAX_ARGUMENT_CHARS } from '../eval-limits.ts'
import { LineWriter } from '../line-writer.ts'
import { sandboxMessageSchema, type HostMessage, type SandboxMessage } from '../sandbox-protocol.ts'

const here = fileURLToPath(import.meta.url)

/** The sandbox's entry point, with this file's own extension (`.ts` from a clone, `.js` built). */
export const SANDBOX_MAIN = path.join(
  path.dirname(here),
  '..',
  'sandbox',
  `sandbox-main${path.extname(here)}`,
)

/** How long the sandbox may take to say it is ready. */
const START_TIMEOUT_MS = 15_000
/** Characters of the sandbox's stderr kept, for the message when it dies. */
const STDERR_KEPT_CHARS = 4_000
/**
 * Longest line the sandbox may send: a call's arguments (JSON, at most MAX_ARGUMENT_CHARS
 * characters) written again inside the message's JSON take at most three bytes a character,
 * plus room for the rest of the message.
 */
export const MAX_SANDBOX_LINE_BYTES = 3 * MAX_ARGUMENT_CHARS + 1024 * 1024

/** What the owner of a sandbox process hears. */
export interface SandboxProcessEvents {
  readonly message: (message: SandboxMessage) => void
  /** The process ended without being closed. */
  readonly exit: (reason: string) => void
}

/** One running sandbox process. */
export class SandboxProcess {
  readonly #child: ChildProcess
  readonly #toSandbox: LineWriter
  #stderr = ''
  /** When the sandbox last sent anything (a whole line or a part of one). */
  #lastHeardAt = performance.now()
  #closed = false
  #exited = false
  readonly #exit: Promise<void>

  private constructor(child: ChildProcess) {
    this.#child = child
    this.#exit = new Promise((resolve) => child.once('exit', () => resolve()))
    // stdin is piped (spawn below), so it exists.
    this.#toSandbox = new LineWriter(child.stdin as Writable)
  }

  /**
   * Starts a sandbox process and waits until it is ready.
   *
   * @throws EitriError `sandbox_reset` when it cannot start.
   */
  static async start(
    events: SandboxProcessEvents,
    nodePath: string = process.execPath,
  ): Promise<SandboxProcess> {
    const child = spawn(
      nodePath,
      ['--no-node-snapshot', '--disable-warning=ExperimentalWarning', SANDBOX_MAIN],
      { stdio: ['pipe', 'ignore', 'pipe', 'pipe'], env: {}, cwd: '/' },
    )
    const sandbox = new SandboxProcess(child)
    child.stderr?.on('data', (chunk: Buffer) => {
      sandbox.#stderr = (sandbox.#stderr + chunk.toString('utf8')).slice(-STDERR_KEPT_CHARS)
    })
    // A write to a sandbox that died fails with EPIPE; its exit is reported on its own.
    child.stdin?.on('error', () => undefined)
    let onReady: ((message: SandboxMessage | undefined) => void) | undefined
    const lines = new LineSplitter(MAX_SANDBOX_LINE_BYTES, {
      line: (line) => {
        const message = sandbox.#parse(line)
        if (onReady !== undefined) return onReady(message)
        if (message !== undefined) events.message(message)
      },
      overflow: () => sandbox.#outOfProtocol(),
    })
    const fromSandbox = child.stdio[3] as Readable | null
    fromSandbox?.on('data', (chunk: Buffer) => {
      sandbox.#lastHeardAt = performance.now()
      lines.push(chunk)
    })
    fromSandbox?.on('error', () => undefined)
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error): void => fail(error.message)
      const onExit = (code: number | null, signal: string | null): void =>
        fail(`it exited (${signal ?? code})`)
      const timer = setTimeout(() => fail('it did not start in time'), START_TIMEOUT_MS)
      const settle = (): void => {
        clearTimeout(timer)
        onReady = undefined
        child.off('error', onError)
        child.off('exit', onExit)
      }
      const fail = (reason: string): void => {
        settle()
        child.kill('SIGKILL')
        reject(
          new EitriError(
            'sandbox_reset',
            `The code sandbox could not start: ${reason}. ${sandbox.#stderr.trim()}`.trim(),
          ),
        )
      }
      child.once('error', onError)
      child.once('exit', onExit)
      onReady = (message) => {
        if (message?.type !== 'ready') return fail('it did not introduce itself')
        settle()
        resolve()
      }
    })
    child.on('error', () => undefined)
    child.once('exit', (code, signal) => {
      sandbox.#exited = true
      sandbox.#toSandbox.close()
      if (sandbox.#closed) return
      const detail = sandbox.#stderr.trim().split('\n').slice(-3).join(' ')
      events.exit(
        `the sandbox process ended (${signal ?? `exit ${code}`})${detail === '' ? '' : `: ${detail}`}`,
      )
    })
    return sandbox
  }

  /** The process id, for measurements. */
  get pid(): number | undefined {
    return this.#child.pid
  }

  /**
   * When the sandbox last sent anything, in `performance.now()` time: a sandbox busy with large
   * messages is still heard from, a hung one is not.
   */
  get lastHeardAt(): number {
    return this.#lastHeardAt
  }

  /** True until the process ends. */
  get alive(): boolean {
    return !this.#exited
  }

  /**
   * Sends one message; false when the process is gone. `written` is called once the message
   * has been handed to the pipe, or at once when it could not be sent. A large message waits
   * its turn among the large messages of other `key`s (sessions); small ones go at once.
   */
  send(message: HostMessage, written?: () => void, key?: string): boolean {
    if (this.#exited) {
      written?.()
      return false
    }
    return this.#toSandbox.write(JSON.stringify(message), {
      ...(key === undefined ? {} : { key }),
      ...(written === undefined ? {} : { written }),
    })
  }

  /** Kills the process (its state is only isolates) and waits for it. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true
    this.#toSandbox.close()
    if (!this.#exited) this.#child.kill('SIGKILL')
    await this.#exit
  }

  /** One line from the sandbox, validated; undefined (and the sandbox killed) if it is not. */
  #parse(line: string): SandboxMessage | undefined {
    let json: unknown
    try {
      json = JSON.parse(line)
    } catch {
      this.#outOfProtocol()
      return undefined
    }
    const parsed = sandboxMessageSchema.safeParse(json)
    if (!parsed.success) {
      this.#outOfProtocol()
      return undefined
    }
    return parsed.data
  }

  /** A sandbox that speaks out of protocol is not trusted with anything more. */
  #outOfProtocol(): void {
    this.#stderr += '\neitri: the sandbox sent a message out of protocol and was ended.'
    this.#child.kill('SIGKILL')
    // Whatever still writes to the channel (a child it left) gets EPIPE, not a reader.
    ;(this.#child.stdio[3] as Readable | null)?.destroy()
  }
}
