/**
 * @module provider/replaced-calls
 * A model with its two calls replaced and everything else its own: a proxy, not a copy, so the
 * adapter's getters (`supportedUrls`, `provider`) keep working. The one way eitri wraps a model
 * (key-withheld-model.ts, agent/llm/gated-model.ts).
 */
import type { LanguageModelV4 } from '@ai-sdk/provider'

/** `model` whose `doGenerate` and `doStream` are `calls`'. */
export function withCalls(
  model: LanguageModelV4,
  calls: Pick<LanguageModelV4, 'doGenerate' | 'doStream'>,
): LanguageModelV4 {
  return new Proxy(model, {
    get(target, property) {
      if (property === 'doGenerate') return calls.doGenerate
      if (property === 'doStream') return calls.doStream
      const value: unknown = Reflect.get(target, property, target)
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value
    },
  })
}
