/**
 * @module eval/sandbox/sandbox-host
 * The sandbox process's side of the protocol: keeps its sessions by id and routes each message
 * from the server to the session it names.
 */
import type { EvalOutcome } from '../eval-outcome.ts'
import type { HostMessage } from '../sandbox-protocol.ts'
import { IsolateSession } from './isolate-session.ts'

/** What the sandbox sends to the server; `key` (the session) takes turns for large messages. */
export type SendToServer = (message: Record<string, unknown>, key?: string) => void

/** The sessions of one sandbox process. */
export class SandboxHost {
  readonly #sessions = new Map<string, IsolateSession>()
  /** The session (and its id) of each eval in progress. */
  readonly #evals = new Map<number, { readonly session: IsolateSession; readonly id: string }>()
  readonly #send: SendToServer
  readonly #onCatastrophicError: (message: string) => void

  constructor(send: SendToServer, onCatastrophicError: (message: string) => void) {
    this.#send = send
    this.#onCatastrophicError = onCatastrophicError
  }

  /** The number of live sessions. */
  get size(): number {
    return this.#sessions.size
  }

  /** Handles one message from the server. */
  async handle(message: HostMessage): Promise<void> {
    switch (message.type) {
      case 'create':
        return this.#create(message.session, message.memoryLimitMb, message.namespaces)
      case 'eval': {
        const session = this.#sessions.get(message.session)
        if (session === undefined) {
          this.#result(message.evalId, {
            type: 'error',
            code: 'sandbox_reset',
            message: 'This session no longer exists in the sandbox.',
            output: '',
            stateKept: false,
          })
          return
        }
        this.#evals.set(message.evalId, { session, id: message.session })
        return session.eval(message.evalId, message.code, message.timeoutMs)
      }
      case 'cancel':
        this.#evals.get(message.evalId)?.session.cancel(message.evalId)
        return
      case 'reply':
        return this.#evals
          .get(message.evalId)
          ?.session.reply(message.evalId, message.callId, message.value, message.error)
      case 'dispose': {
        const session = this.#sessions.get(message.session)
        this.#sessions.delete(message.session)
        session?.dispose()
        return
      }
      case 'stats':
        return
    }
  }

  async #create(
    id: string,
    memoryLimitMb: number,
    namespaces: Readonly<Record<string, readonly string[]>>,
  ): Promise<void> {
    try {
      const session = await IsolateSession.create({
        memoryLimitMb,
        namespaces,
        onCatastrophicError: this.#onCatastrophicError,
        events: {
          call: (evalId, callId, namespace, name, args) =>
            this.#send({ type: 'call', evalId, callId, namespace, name, args }, id),
          result: (evalId, outcome) => this.#result(evalId, outcome),
        },
      })
      this.#sessions.set(id, session)
      this.#send({ type: 'created', session: id })
    } catch (error) {
      this.#send({ type: 'created', session: id, error: (error as Error).message })
    }
  }

  #result(evalId: number, outcome: EvalOutcome): void {
    const running = this.#evals.get(evalId)
    this.#evals.delete(evalId)
    if (running?.session.disposed === true) {
      for (const [id, candidate] of this.#sessions) {
        if (candidate === running.session) this.#sessions.delete(id)
      }
    }
    // Keyed by session: a large result takes turns with other sessions' large messages rather
    // than waiting behind all of them.
    this.#send({ type: 'result', evalId, outcome }, running?.id)
  }
}
