/**
 * @module bench/scripted-model
 * A model that plays a fixed script, for environments run without a provider: each step
 * answers from the prompt it is given (so a script can quote a tool's result), with fixed
 * usage so dollars are charged as for a real model. It implements the AI SDK's model
 * interface itself rather than the SDK's test double, which is not part of the package's
 * runtime surface.
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
} from '@ai-sdk/provider'
import { EitriError } from '../errors/eitri-error.ts'

/** One step of a script: what the model answers, given the prompt so far. */
export type ScriptStep = (prompt: LanguageModelV4Prompt) => LanguageModelV4GenerateResult

/** The usage each scripted step reports. */
const STEP_USAGE: LanguageModelV4GenerateResult['usage'] = {
  inputTokens: { total: 200, noCache: 200, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 40, text: 40, reasoning: 0 },
}

/** A model playing `steps` in order; a step past the end is an error (the script is wrong). */
export function scriptedModel(steps: readonly ScriptStep[], modelId = 'scripted'): LanguageModelV4 {
  let next = 0
  const generate = async (options: LanguageModelV4CallOptions) => {
    const step = steps[next++]
    if (step === undefined) {
      throw new EitriError(
        'limit_exceeded',
        `The scripted model has no step ${next}: its script ended.`,
      )
    }
    return step(options.prompt)
  }
  return {
    specificationVersion: 'v4',
    provider: 'scripted',
    modelId,
    supportedUrls: {},
    doGenerate: generate,
    doStream: () => {
      throw new EitriError('not_available', 'The scripted model does not stream.')
    },
  }
}

/** A step calling one tool with `input`. */
export function callTool(name: string, input: unknown): ScriptStep {
  return () => ({
    content: [
      {
        type: 'tool-call',
        toolCallId: `call-${name}`,
        toolName: name,
        input: JSON.stringify(input),
      },
    ],
    finishReason: { unified: 'tool-calls', raw: undefined },
    usage: STEP_USAGE,
    warnings: [],
  })
}

/** A step answering with text. */
export function answer(text: string | ((prompt: LanguageModelV4Prompt) => string)): ScriptStep {
  return (prompt) => ({
    content: [{ type: 'text', text: typeof text === 'string' ? text : text(prompt) }],
    finishReason: { unified: 'stop', raw: undefined },
    usage: STEP_USAGE,
    warnings: [],
  })
}

/** The text of the last tool result in `prompt` (its error text for a failed call). */
export function lastToolResult(prompt: LanguageModelV4Prompt): string {
  for (let index = prompt.length - 1; index >= 0; index--) {
    const message = prompt[index]
    if (message?.role !== 'tool') continue
    const part = message.content.at(-1)
    if (part?.type !== 'tool-result') continue
    const output = part.output
    return output.type === 'text' || output.type === 'error-text'
      ? output.value
      : JSON.stringify(output)
  }
  return ''
}
