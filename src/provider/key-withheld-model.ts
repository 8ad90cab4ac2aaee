/**
 * @module provider/key-withheld-model
 * A model whose failures never carry its key. A provider's error may echo what it was sent (a
 * proxy answering 401 with "invalid key: Bearer sk-…", a server echoing the request's headers),
 * and an error's text travels far: into the Run's row and journal, `run_observe` (which other
 * Runs may call), `eitri runs show`, a log. So the key is cut out of every error the model
 * throws or streams, where it is made, before anything can keep it.
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider'
import { withCalls } from './replaced-calls.ts'

/** What stands in an error for the key it echoed. */
export const WITHHELD_KEY = '[API key withheld]'

/** Keys shorter than this are not searched for: cutting every "ab" would garble the text. */
const MIN_KEY_LENGTH = 8

/** How deep an error's fields are searched (cause chains, response bodies, nested data). */
const MAX_DEPTH = 12

/**
 * `model`, its errors (thrown by a call, thrown or sent by its stream) with `key` replaced by
 * {@link WITHHELD_KEY} wherever it appears in them. `model` itself when there is no key.
 */
export function withholdKey(model: LanguageModelV4, key: string | undefined): LanguageModelV4 {
  if (key === undefined || key.length < MIN_KEY_LENGTH) return model
  const cut = (error: unknown): unknown => withheld(error, key, new Set(), 0)
  const doGenerate = async (options: LanguageModelV4CallOptions) => {
    try {
      return await model.doGenerate(options)
    } catch (error) {
      throw cut(error)
    }
  }
  const doStream = async (options: LanguageModelV4CallOptions) => {
    let started: Awaited<ReturnType<LanguageModelV4['doStream']>>
    try {
      started = await model.doStream(options)
    } catch (error) {
      throw cut(error)
    }
    return { ...started, stream: withheldStream(started.stream, cut) }
  }
  return withCalls(model, { doGenerate, doStream })
}

/** `stream` with its error parts, and the error it may end with, cut. */
function withheldStream(
  stream: ReadableStream<LanguageModelV4StreamPart>,
  cut: (error: unknown) => unknown,
): ReadableStream<LanguageModelV4StreamPart> {
  const reader = stream.getReader()
  return new ReadableStream<LanguageModelV4StreamPart>({
    async pull(controller) {
      let next: Awaited<ReturnType<typeof reader.read>>
      try {
        next = await reader.read()
      } catch (error) {
        controller.error(cut(error))
        return
      }
      if (next.done) {
        controller.close()
        return
      }
      const part = next.value
      controller.enqueue(part.type === 'error' ? { ...part, error: cut(part.error) } : part)
    },
    cancel: (reason) => reader.cancel(reason),
  })
}

/**
 * `value` with `key` cut from every string in it: a string is answered cut, an object (an
 * error, its cause, a parsed response body) is cut in place, own fields hidden or not (an
 * error's message and stack are not enumerable). Fields that cannot be written are left.
 */
function withheld(value: unknown, key: string, seen: Set<object>, depth: number): unknown {
  if (typeof value === 'string')
    return value.includes(key) ? value.replaceAll(key, WITHHELD_KEY) : value
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH || seen.has(value)) {
    return value
  }
  seen.add(value)
  for (const name of Object.getOwnPropertyNames(value)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, name)
    if (descriptor === undefined || !('value' in descriptor)) continue
    const cut = withheld(descriptor.value, key, seen, depth + 1)
    if (cut !== descriptor.value && descriptor.writable === true) {
      ;(value as Record<string, unknown>)[name] = cut
    }
  }
  return value
}
