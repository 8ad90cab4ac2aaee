/**
 * @module agent/llm/gated-model
 * A model whose calls wait for a gate. The loop hands the AI SDK this model while the intent
 * of the call is still being synced: the SDK prepares the call (the prompt's conversion, the
 * tools' schemas, its telemetry) on the thread meanwhile, and the provider is called only once
 * the intent is durable (decision 0041). A gate that rejects fails the call before the
 * provider hears of it.
 */
import type { LanguageModelV4, LanguageModelV4CallOptions } from '@ai-sdk/provider'
import { withCalls } from '../../provider/replaced-calls.ts'

/**
 * `model`, each of whose calls first awaits `gate()` (read at the call, so one gated model
 * serves every step of a Run).
 */
export function gatedModel(model: LanguageModelV4, gate: () => Promise<void>): LanguageModelV4 {
  const doGenerate = async (options: LanguageModelV4CallOptions) => {
    await gate()
    // Cancelled while its intent was synced: the call is not made.
    options.abortSignal?.throwIfAborted()
    return model.doGenerate(options)
  }
  const doStream = async (options: LanguageModelV4CallOptions) => {
    await gate()
    options.abortSignal?.throwIfAborted()
    return model.doStream(options)
  }
  return withCalls(model, { doGenerate, doStream })
}
