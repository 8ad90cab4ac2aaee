/**
 * @module agent/llm/step-journal
 * What a model Run writes between two effects, gathered and written in one transaction.
 * Journal events, chat messages and metrics are held until the loop is about to start an
 * effect (a model call, a call of a tool that is not read-only); the intent of that effect is
 * the last record of the write, which is durable before the effect starts. A read-only tool's
 * call changes nothing, so its intent and result are held like any record (decision 0016). So an owner that dies mid-effect leaves a
 * journal ending on the intent (the sweep then reports an unknown outcome), and a step costs
 * one commit per effect instead of one per record. Records keep the order they were given.
 */
import type { ChatMessage, RunMetrics, RunStepRecords } from '../../store/run-trace.ts'
import type { Store } from '../../store/store.ts'

/** How a step's write is made durable: retried while the store refuses, until cancelled. */
export type DurableWriter = <T>(
  write: (call: { readonly signal?: AbortSignal }) => Promise<T>,
) => Promise<T>

/** The records of one Run waiting for its next write. */
export class StepJournal {
  readonly #store: Store
  readonly #runId: string
  readonly #chatId: string
  readonly #durably: DurableWriter
  readonly #log: ((message: string, error: unknown) => void) | undefined
  #events: { readonly type: string; readonly data?: unknown }[] = []
  #messages: ChatMessage[] = []
  #metrics: RunMetrics | undefined

  constructor(input: {
    readonly store: Store
    readonly runId: string
    readonly chatId: string
    readonly durably: DurableWriter
    readonly log?: ((message: string, error: unknown) => void) | undefined
  }) {
    this.#store = input.store
    this.#runId = input.runId
    this.#chatId = input.chatId
    this.#durably = input.durably
    this.#log = input.log
  }

  /** Adds events to the journal's next write. */
  event(...events: { readonly type: string; readonly data?: unknown }[]): void {
    this.#events.push(...events)
  }

  /** Adds messages to the chat's next write. */
  chat(messages: readonly ChatMessage[]): void {
    this.#messages.push(...messages)
  }

  /** Sets the metrics the next write stores (the latest replace the earlier). */
  metrics(metrics: RunMetrics): void {
    this.#metrics = metrics
  }

  /**
   * Writes what is held, with `intent` last, in one transaction; resolves once it is durable.
   * Call it before every effect, with the effect's intent, and before the loop returns.
   */
  async write(intent?: { readonly type: string; readonly data?: unknown }): Promise<void> {
    if (intent !== undefined) this.#events.push(intent)
    const step = this.#take()
    if (step === undefined) return
    try {
      await this.#durably((call) => this.#store.appendRunStep(this.#runId, step, call))
    } catch (error) {
      // Not written (cancelled): what already happened is held again for writeOnExit; the
      // intent is dropped, as its effect will not start.
      const events = step.events ?? []
      this.#events = intent === undefined ? [...events] : events.slice(0, -1)
      this.#messages = [...(step.chat?.messages ?? [])]
      this.#metrics = step.metrics
      throw error
    }
  }

  /**
   * Writes what is held once, ignoring cancellation, when the loop ends by throwing (cancelled
   * or failed): the records of what already happened are kept if the store takes them. A
   * failure is logged, not thrown, so the loop's own error is the one its Run hears.
   */
  async writeOnExit(): Promise<void> {
    const step = this.#take()
    if (step === undefined) return
    try {
      await this.#store.appendRunStep(this.#runId, step)
    } catch (error) {
      this.#log?.(
        `The last records of Run ${this.#runId} could not be written as it ended: ${(error as Error).message}`,
        error,
      )
    }
  }

  /** What is held, now emptied; undefined when nothing is. */
  #take(): RunStepRecords | undefined {
    if (this.#events.length === 0 && this.#messages.length === 0 && this.#metrics === undefined) {
      return undefined
    }
    const step: RunStepRecords = {
      ...(this.#events.length > 0 && { events: this.#events }),
      ...(this.#messages.length > 0 && {
        chat: { chatId: this.#chatId, messages: this.#messages },
      }),
      ...(this.#metrics !== undefined && { metrics: this.#metrics }),
    }
    this.#events = []
    this.#messages = []
    this.#metrics = undefined
    return step
  }
}
