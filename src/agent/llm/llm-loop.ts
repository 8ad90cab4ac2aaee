/**
 * @module agent/llm/llm-loop
 * The model loop of one Run. Each step is one model exchange: the model is offered exactly the
 * Run's tools (with no way to run them itself), and the loop runs each call it makes through
 * the Run's tools, in order, then asks again. The Run ends when the model answers without a
 * tool call (its text is the value), at the step bound (failed), when the next call cannot be
 * reserved from the budget or a call cost more than was reserved for it (waiting,
 * `budget-exhausted`), or on three identical calls in a row
 * (failed, `repeated-tool-call`). Every model call and tool call is journaled as an intent
 * before and a result after; every message is kept in the Run's chat; usage and cost are the
 * Run's metrics, updated after each model call. What happens between two effects is written
 * in one transaction that ends with the next effect's intent (see `step-journal.ts`); a call of
 * a read-only tool is not an effect, so it runs with no commit of its own.
 */
import {
  generateText,
  jsonSchema,
  tool,
  type ModelMessage,
  type ToolResultPart,
  type ToolSet,
} from 'ai'
import type { JSONSchema7 } from '@ai-sdk/provider'
import type { ModelPrice, ResolvedModel } from '../../provider/model-catalog.ts'
import type { ModelStepMetrics, RunMetrics } from '../../store/run-trace.ts'
import type { Store } from '../../store/store.ts'
import type { OfferedTool } from '../../tool/toolset.ts'
import { durableWrite } from '../durable-write.ts'
import type { ProgramContext, ProgramOutcome } from '../program.ts'
import { runChatId } from './chat-id.ts'
import {
  COMPACT_AT,
  COMPACT_TO,
  messagesTokens,
  pruneToolOutputs,
  SUMMARY_SYSTEM,
  summarised,
  tailStart,
  transcript,
} from './compaction.ts'
import { systemPrompt, taskMessage } from './harness-prompt.ts'
import { gatedModel } from './gated-model.ts'
import { inputsId } from './inputs-id.ts'
import {
  dollarsOf,
  estimateTokens,
  reservationDollars,
  type BudgetLedger,
  type TokenCounts,
} from './model-budget.ts'
import type { LlmModelRun } from './llm-model-run.ts'
import { RepeatedToolCalls } from './repeated-tool-calls.ts'
import { StepJournal } from './step-journal.ts'
import { CallAttempts } from './call-attempts.ts'

/** What one Run's loop works with. */
export interface LlmLoopSettings {
  readonly model: ResolvedModel & { readonly price: ModelPrice }
  readonly provider: string
  readonly modelName: string
  readonly maxModelSteps: number
  readonly maxOutputTokens: number
  readonly ledger: BudgetLedger
  /** The Run as its tools see it: told each settled call and the conversation's size. */
  readonly modelRun?: LlmModelRun | undefined
  /** How the conversation is kept within the context window; undefined: it is not. */
  readonly compaction?: CompactionSettings | undefined
  /** Where the Run's metrics and chat are kept. */
  readonly store: Store
  readonly onStoreRetry?: ((message: string, error: unknown) => void) | undefined
}

/** Compaction of one Run. */
export interface CompactionSettings {
  /** The model's context window, in tokens. */
  readonly contextWindow: number
  /** The model that writes summaries (the Run's own, or the program's `compactionModel`). */
  readonly model: ResolvedModel & { readonly price: ModelPrice }
}

/** The error of a Run that reached its step bound. */
export function stepBoundError(steps: number): string {
  return `The agent exceeded its model-step bound (${steps} model steps) without a final answer; raise maxModelSteps or narrow the task.`
}

/** Runs the loop to the Run's outcome; throws (the signal's reason) once cancelled. */
export async function runLlmLoop(
  context: ProgramContext,
  settings: LlmLoopSettings,
): Promise<ProgramOutcome> {
  const { signal } = context
  const { model, ledger, store } = settings
  const price = model.price
  // Cancelled before the first step: no model call, no trace.
  signal.throwIfAborted()
  const system = systemPrompt(context.agent)
  const task = taskMessage(context.task)
  const offered = await context.tools.offered()
  const tools = toolSet(offered)
  const toolsText = JSON.stringify(
    offered.map(({ name, description, input_schema }) => ({ name, description, input_schema })),
  )
  // The intent the next model call waits for (see gatedModel), and the call's attempts: the
  // AI SDK's retries reserve again (call-attempts.ts).
  let intentDurable: Promise<void> = Promise.resolve()
  let attempts: CallAttempts | undefined
  const gatedCalls = gatedModel(model.model, async () => {
    await intentDurable
    attempts?.attempt()
  })
  const journal = new StepJournal({
    store,
    runId: context.runId,
    chatId: runChatId(context.runId),
    durably: (write) => durableWrite(write, { signal, log: settings.onStoreRetry }),
    log: settings.onStoreRetry,
  })
  const steps: ModelStepMetrics[] = []
  // Summaries are model calls too: they count in the totals, not as steps.
  const summaries: ModelStepMetrics[] = []
  // The same for every step of the Run: hashed once, not at each step's metrics.
  const runInputsId = inputsId(system, offered, model.ref)
  const metrics = (): RunMetrics => ({
    provider: settings.provider,
    model: settings.modelName,
    inputsId: runInputsId,
    modelSteps: steps.length,
    inputTokens: sum(steps, 'inputTokens') + sum(summaries, 'inputTokens'),
    outputTokens: sum(steps, 'outputTokens') + sum(summaries, 'outputTokens'),
    cachedInputTokens: sum(steps, 'cachedInputTokens') + sum(summaries, 'cachedInputTokens'),
    dollars: sum(steps, 'dollars') + sum(summaries, 'dollars'),
    steps: [...steps],
  })
  journal.chat([
    { role: 'system', content: system },
    { role: 'user', content: task },
  ])
  try {
    const outcome = await loop()
    await journal.write()
    return outcome
  } catch (error) {
    await journal.writeOnExit()
    throw error
  }

  async function loop(): Promise<ProgramOutcome> {
    let messages: ModelMessage[] = [{ role: 'user', content: task }]
    const repeated = new RepeatedToolCalls()
    const fixedTokens = estimateTokens(system) + estimateTokens(toolsText)
    for (let step = 0; step < settings.maxModelSteps; step++) {
      signal.throwIfAborted()
      if (settings.compaction !== undefined) {
        const compacted = await compact({
          context,
          journal,
          settings: settings.compaction,
          ledger,
          messages,
          fixedTokens,
          task,
          step,
        })
        messages = compacted.messages
        if (compacted.summary !== undefined) {
          summaries.push(compacted.summary.metrics)
          settings.modelRun?.record({
            step,
            kind: 'compaction',
            model: settings.compaction.model.ref,
            inputTokens: compacted.summary.metrics.inputTokens,
            outputTokens: compacted.summary.metrics.outputTokens,
            dollars: compacted.summary.metrics.dollars,
          })
          journal.chat([{ role: 'summary', content: compacted.summary.text }])
          if (compacted.summary.overspent) {
            // It cost more than was reserved: no further call may spend on a guess that failed.
            journal.metrics(metrics())
            return { status: 'waiting', reason: 'budget-exhausted' }
          }
        }
      }
      const estimated = fixedTokens + messagesTokens(messages)
      const reservation = ledger.reserve(
        reservationDollars(price, estimated, settings.maxOutputTokens),
      )
      if (reservation === undefined) return { status: 'waiting', reason: 'budget-exhausted' }
      // Durable before the call: an owner dying during it leaves the journal on this intent.
      // Not awaited here: the AI SDK prepares the call while the intent's commit is synced,
      // and the gated model calls the provider only once it is durable (decision 0041).
      const intent = journal.write({
        type: 'model-call-intent',
        data: {
          step,
          model: model.ref,
          reservedDollars: reservation.dollars,
          estimatedInputTokens: estimated,
        },
      })
      // Awaited on every path below; this only keeps a refusal from counting as unhandled.
      intent.catch(() => undefined)
      intentDurable = intent
      const call = (attempts = new CallAttempts(ledger, reservation))
      let result: Awaited<ReturnType<typeof generateText<ToolSet>>>
      try {
        result = await generateText({
          model: gatedCalls,
          system,
          messages,
          tools,
          maxOutputTokens: settings.maxOutputTokens,
          abortSignal: signal,
        })
      } catch (error) {
        // An intent that was not written (cancelled, the store refused) failed the call before
        // the provider heard of it: the loop ends on the write's error, as it always did.
        // Otherwise the call failed after its intent was durable (or before it was made).
        await intent
        // A call that failed may still have been billed: its reservations are kept as spent.
        call.settleFailed()
        signal.throwIfAborted()
        const message = error instanceof Error ? error.message : String(error)
        journal.event({
          type: 'model-call-result',
          data: { step, error: message, ...(call.retries > 0 && { retries: call.retries }) },
        })
        return {
          status: 'failed',
          reason: 'model-call-failed',
          error: `The call to model ${model.ref}${model.host === undefined ? '' : ` at ${model.host}`} failed: ${message}`,
        }
      }
      const counts = tokenCounts(result.usage, estimated, settings.maxOutputTokens)
      // The answer's cost by its usage, and the failed attempts' reservations before it.
      const answered = dollarsOf(price, counts)
      const settled = call.settle(answered)
      const dollars = answered + settled.retriedDollars
      const beyondReservation = settled.beyond
      const calls = result.toolCalls
      settings.modelRun?.record({
        step,
        kind: 'model-call',
        model: model.ref,
        inputTokens: counts.inputTokens,
        outputTokens: counts.outputTokens,
        dollars,
      })
      steps.push({
        step,
        finishReason: result.finishReason,
        toolCalls: calls.map((call) => call.toolName),
        ...counts,
        dollars,
      })
      journal.event({
        type: 'model-call-result',
        data: {
          step,
          finishReason: result.finishReason,
          toolCalls: calls.length,
          ...counts,
          dollars,
          ...(call.retries > 0 && {
            retries: call.retries,
            retriedDollars: settled.retriedDollars,
          }),
          ...(beyondReservation > 0 && { beyondReservationDollars: beyondReservation }),
        },
      })
      messages.push(...result.response.messages)
      if (settings.modelRun !== undefined) {
        // What the next call would send so far, for a tool that estimates it.
        settings.modelRun.inputTokens = fixedTokens + messagesTokens(messages)
      }
      journal.chat(result.response.messages)
      journal.metrics(metrics())
      signal.throwIfAborted()
      if (calls.length === 0) {
        return { status: 'completed', value: result.text, output: result.text }
      }
      // The provider reported more than was reserved: the excess is charged, and nothing more
      // is spent on an estimate that proved wrong (its tool calls could hire, and a next call
      // could go on past the budget).
      if (beyondReservation > 0) return { status: 'waiting', reason: 'budget-exhausted' }
      const results: ToolResultPart[] = []
      for (const call of calls) {
        if (repeated.repeats(call.toolName, call.input)) {
          return {
            status: 'failed',
            reason: 'repeated-tool-call',
            error: `The agent called ${call.toolName} with the same input three times in a row; it was stopped instead of looping.`,
          }
        }
        signal.throwIfAborted()
        const intent = {
          type: 'tool-call-intent',
          data: {
            step,
            toolCallId: call.toolCallId,
            name: call.toolName,
            input: (call.input as unknown) ?? null,
          },
        }
        if (context.tools.readOnly?.(call.toolName) === true) {
          // A call that changes nothing has no effect to journal before it: its intent and
          // result ride in the next write, which ends on the next effect's intent.
          journal.event(intent)
        } else {
          // Written with what the model call left, durable before the tool runs.
          await journal.write(intent)
        }
        const answer = await context.tools.call(
          { name: call.toolName, input: call.input },
          { signal },
        )
        journal.event({
          type: 'tool-call-result',
          data: {
            step,
            toolCallId: call.toolCallId,
            name: call.toolName,
            type: answer.type,
            ...(answer.type === 'error' && { code: answer.code }),
            // A command's exit status: a shell call that exited 1 is a success of the tool.
            ...exitCodeOf(answer.metadata),
          },
        })
        results.push({
          type: 'tool-result',
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          output:
            answer.type === 'success'
              ? { type: 'text', value: answer.content }
              : { type: 'error-text', value: answer.content },
        })
      }
      const toolMessage: ModelMessage = { role: 'tool', content: results }
      messages.push(toolMessage)
      journal.chat([toolMessage])
    }
    return { status: 'failed', reason: 'step-bound', error: stepBoundError(settings.maxModelSteps) }
  }
}

/** What compacting gave: the messages to send, and the summary written, if one was. */
interface Compacted {
  readonly messages: ModelMessage[]
  readonly summary?:
    | {
        readonly text: string
        readonly metrics: ModelStepMetrics
        /** It cost more than was reserved for it. */
        readonly overspent: boolean
      }
    | undefined
}

/**
 * The conversation, compacted when it passes {@link COMPACT_AT} of the window: old tool outputs
 * pruned first, then the history before the last turns summarised. A summary that cannot be
 * reserved or fails is skipped: the pruned conversation is sent, and the step's own reservation
 * decides whether the Run goes on.
 */
async function compact(input: {
  readonly context: ProgramContext
  readonly journal: StepJournal
  readonly settings: CompactionSettings
  readonly ledger: BudgetLedger
  readonly messages: ModelMessage[]
  readonly fixedTokens: number
  readonly task: string
  readonly step: number
}): Promise<Compacted> {
  const { context, journal, settings, ledger, fixedTokens, step } = input
  const limit = COMPACT_AT * settings.contextWindow
  const before = fixedTokens + messagesTokens(input.messages)
  if (before <= limit) return { messages: input.messages }
  const pruned = pruneToolOutputs(input.messages)
  const afterPruning = fixedTokens + messagesTokens(pruned)
  journal.event({
    type: 'compaction',
    data: { step, kind: 'pruned', tokensBefore: before, tokensAfter: afterPruning },
  })
  const tail = tailStart(pruned)
  if (afterPruning <= limit || tail <= 1) return { messages: pruned }
  const history = transcript(pruned.slice(0, tail))
  const keptTokens = fixedTokens + messagesTokens(pruned.slice(tail)) + estimateTokens(input.task)
  const target = Math.max(256, Math.floor(COMPACT_TO * settings.contextWindow) - keptTokens)
  const estimated = estimateTokens(SUMMARY_SYSTEM) + estimateTokens(history)
  const price = settings.model.price
  const reservation = ledger.reserve(reservationDollars(price, estimated, target))
  if (reservation === undefined) return { messages: pruned }
  await journal.write({
    type: 'compaction-intent',
    data: { step, model: settings.model.ref, reservedDollars: reservation.dollars },
  })
  const call = new CallAttempts(ledger, reservation)
  try {
    const result = await generateText({
      model: gatedModel(settings.model.model, async () => call.attempt()),
      system: SUMMARY_SYSTEM,
      messages: [{ role: 'user', content: history }],
      maxOutputTokens: target,
      abortSignal: context.signal,
    })
    const counts = tokenCounts(result.usage, estimated, target)
    const answered = dollarsOf(price, counts)
    const settled = call.settle(answered)
    const dollars = answered + settled.retriedDollars
    const beyondReservation = settled.beyond
    const messages = summarised(pruned, input.task, result.text)
    journal.event({
      type: 'compaction-result',
      data: { step, tokensAfter: fixedTokens + messagesTokens(messages), ...counts, dollars },
    })
    return {
      messages,
      summary: {
        text: result.text,
        metrics: { step, finishReason: 'compaction', toolCalls: [], ...counts, dollars },
        overspent: beyondReservation > 0,
      },
    }
  } catch (error) {
    call.settleFailed()
    context.signal.throwIfAborted()
    const message = error instanceof Error ? error.message : String(error)
    journal.event({ type: 'compaction-result', data: { step, error: message } })
    return { messages: pruned }
  }
}

/** The offered tools as the AI SDK takes them: described, with no `execute`, so the model only asks. */
function toolSet(offered: readonly OfferedTool[]): ToolSet {
  const tools: ToolSet = {}
  for (const entry of offered) {
    tools[entry.name] = tool({
      description: entry.description,
      inputSchema: jsonSchema(entry.input_schema as JSONSchema7),
    })
  }
  return tools
}

/**
 * The tokens a call used. A provider that reports no usage is charged as if it used its whole
 * estimate and allowance: a budget is never trusted to a missing number.
 */
function tokenCounts(
  usage: {
    readonly inputTokens: number | undefined
    readonly outputTokens: number | undefined
    readonly inputTokenDetails?: { readonly cacheReadTokens?: number | undefined } | undefined
  },
  estimated: number,
  maxOutputTokens: number,
): TokenCounts {
  // A count that is no whole number of tokens (negative, fractional, not finite) is as good as
  // missing: a provider's number must never lower what a Run has spent.
  const inputTokens = countOf(usage.inputTokens) ?? estimated
  return {
    inputTokens,
    outputTokens: countOf(usage.outputTokens) ?? maxOutputTokens,
    cachedInputTokens: Math.min(
      countOf(usage.inputTokenDetails?.cacheReadTokens) ?? 0,
      inputTokens,
    ),
  }
}

/** `value` if it is a count of tokens (a whole number, not negative). */
function countOf(value: number | undefined): number | undefined {
  return value !== undefined && Number.isSafeInteger(value) && value >= 0 ? value : undefined
}

/** `{ exitCode }` when a tool result's metadata carries one (a number, or null when killed). */
function exitCodeOf(metadata: Readonly<Record<string, unknown>>): { exitCode?: number | null } {
  const exitCode = metadata['exitCode']
  return typeof exitCode === 'number' || exitCode === null ? { exitCode } : {}
}

function sum(steps: readonly ModelStepMetrics[], key: keyof TokenCounts | 'dollars'): number {
  return steps.reduce((total, step) => total + step[key], 0)
}
