/**
 * @module tools/eval/js-eval-tool
 * `js_eval`: JavaScript or TypeScript in a V8 isolate of the caller's own, where definitions
 * persist from one call to the next and the agent programs against its tools through gated
 * capabilities (`fs`, `tools`, `shell`, `http`, `env`, `agent`, `sandbox`).
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import type { EvalAnswer } from '../../ports/code-evaluator.ts'
import { defineTool } from '../../tool/define-tool.ts'
import { toolError, toolSuccess, type ToolResult } from '../../tool/tool-result.ts'

/** Default and longest time limits of one eval. */
export const DEFAULT_EVAL_TIMEOUT_S = 60
export const MAX_EVAL_TIMEOUT_S = 600
/** Longest code accepted. */
export const MAX_EVAL_CODE_CHARS = 1_000_000

/** Runs code in the caller's eval session. */
export const jsEvalTool = defineTool({
  name: 'js_eval',
  changes: 'current-line',
  description: `Run JavaScript or TypeScript (types are stripped, not checked) in a sandboxed V8 isolate. Top-level definitions persist within the session, top-level await works, and the answer is console output then the value of the last expression. Write a small program instead of many tool calls: async globals fs (readFile, readRange, writeFile, list, glob, stat, exists, remove), tools (call, list), shell (run), http (fetch, allowlisted hosts only), env (get), agent (roster, hire, join, race, map: hire agents as Runs and compose them) and sandbox (overview, doc) reach the workspace through the same policy as every tool. No process, require or timers. Default timeout ${DEFAULT_EVAL_TIMEOUT_S} s; memory is limited.`,
  parameters: z.object({
    code: z.string().min(1).max(MAX_EVAL_CODE_CHARS).describe('The code to run.'),
    session: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, ".", "_" and "-", at most 64')
      .optional()
      .describe(
        'Which of your sessions (default: one per connection). Sessions never share state.',
      ),
    timeout_s: z
      .number()
      .positive()
      .max(MAX_EVAL_TIMEOUT_S)
      .optional()
      .describe(`Seconds before the eval is stopped. Default ${DEFAULT_EVAL_TIMEOUT_S}.`),
  }),
  async execute({ code, session, timeout_s: timeoutSeconds }, ctx) {
    if (ctx.evaluator === undefined) {
      throw new EitriError(
        'not_available',
        'This session has no code sandbox, so js_eval cannot run here.',
      )
    }
    const answer = await ctx.evaluator.evaluate(
      {
        code,
        session,
        timeoutMs: timeoutSeconds === undefined ? undefined : timeoutSeconds * 1000,
      },
      ctx,
    )
    return evalResult(answer, timeoutSeconds)
  },
})

/**
 * The tool result of one eval: output first, then the value (or the error). A timeout says the
 * limit it had and how to give more, as a shell timeout does.
 */
export function evalResult(answer: EvalAnswer, timeoutSeconds?: number): ToolResult {
  const { outcome } = answer
  const note = answer.sessionReset === undefined ? '' : `[session reset: ${answer.sessionReset}]\n`
  const metadata = {
    session: answer.session,
    toolCalls: answer.toolCalls,
    durationMs: answer.durationMs,
    ...(answer.sessionReset === undefined ? {} : { sessionReset: answer.sessionReset }),
  }
  if (outcome.type === 'value') {
    return toolSuccess(`${note}${outcome.output}${outcome.value}`, {
      ...metadata,
      valueType: outcome.valueType,
    })
  }
  const stack = outcome.stack === undefined || outcome.stack === '' ? '' : `\n${outcome.stack}`
  const kept =
    outcome.code === 'eval_error'
      ? ''
      : outcome.stateKept
        ? '\n[the session keeps its definitions]'
        : '\n[the session was reset: earlier definitions are gone]'
  const more =
    outcome.code === 'timeout'
      ? ` It had ${timeoutSeconds === undefined ? 'the default limit' : `${timeoutSeconds} s`}: if it was still working, call again with a longer timeout_s (up to ${MAX_EVAL_TIMEOUT_S}).`
      : ''
  return toolError(
    outcome.code,
    `${note}${outcome.output}${outcome.message}${more}${missingFunctionHint(outcome.message)}${stack}${kept}`,
    {
      ...metadata,
      stateKept: outcome.stateKept,
    },
  )
}

/** The guest's capability globals: eitri's own namespaces, which share names with Node's modules. */
const NAMESPACES = new Set(['fs', 'tools', 'shell', 'http', 'env', 'drive', 'agent', 'sandbox'])

/**
 * A hint for a call of a function a namespace does not have (`fs.readdir`, as in Node): the
 * bare TypeError leaves a model guessing at the next name.
 */
function missingFunctionHint(message: string): string {
  const called = /^TypeError: (\w+)\.(\w+) is not a function/.exec(message)
  const [, namespace, name] = called ?? []
  if (namespace === undefined || name === undefined || !NAMESPACES.has(namespace)) return ''
  return ` (${namespace} is eitri's namespace, not Node's module, and has no ${name}: \`await sandbox.doc('${namespace}')\` lists its functions)`
}
