/**
 * @module agent/agent-program
 * What an agent runs when it is hired: its program, as data. Each kind takes an exact set of
 * keys, so a misspelt key (`repy` for `reply`) is refused instead of silently ignored.
 *
 * - `echo`: answers with the task it was given.
 * - `scripted`: answers with its `result` when it has one, else its `reply`; or fails with its
 *   `fail` error (to show and test what a failure does).
 * - `llm`: a model loop over the agent's tools (its definition names the model in `modelPolicy`),
 *   bounded in model steps and in dollars.
 *
 * Both deterministic kinds may wait `delayMs` first (cancellable), to stand in for slow work.
 */
import { z } from 'zod'

/** Every program kind, in the order they were added. */
export const AGENT_PROGRAM_KINDS = Object.freeze(['echo', 'scripted', 'llm'] as const)

/** One of {@link AGENT_PROGRAM_KINDS}. */
export type AgentProgramKind = (typeof AGENT_PROGRAM_KINDS)[number]

/** The most model steps an llm program may take; each step is one model exchange. */
export const MAX_MODEL_STEPS = 256

/** Model steps when the program sets none. */
export const DEFAULT_MAX_MODEL_STEPS = 32

/** Dollars an llm Run may spend when its program sets no budget. */
export const DEFAULT_BUDGET_DOLLARS = 1

/** The longest delay a program may ask for: ten minutes. */
export const MAX_PROGRAM_DELAY_MS = 600_000

const delayMs = z
  .int({ error: 'must be a whole number of milliseconds' })
  .min(0, { error: 'must be 0 or more milliseconds' })
  .max(MAX_PROGRAM_DELAY_MS, {
    error: `must be at most ${MAX_PROGRAM_DELAY_MS} milliseconds (ten minutes)`,
  })

/** A strict object whose refusal of an unknown key lists the keys it takes. */
function programObject<Shape extends z.ZodRawShape>(what: string, shape: Shape) {
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown key; ${what} takes only ${Object.keys(shape).join(', ')} (check the spelling)`
        : undefined,
  })
}

const echoProgram = programObject('an echo program', {
  kind: z.literal('echo'),
  delayMs: delayMs.optional(),
})

const scriptedProgram = programObject('a scripted program', {
  kind: z.literal('scripted'),
  delayMs: delayMs.optional(),
  reply: z.string({ error: 'must be a string (the text the agent answers)' }).optional(),
  /** Any JSON value; plain-data checks happen before the schema. */
  result: z.unknown().optional(),
  /** Fails the Run with this error instead of answering: a failure without a model. */
  fail: z.string({ error: 'must be a string (the error the Run fails with)' }).optional(),
})

const llmProgram = programObject('an llm program', {
  kind: z.literal('llm'),
  maxModelSteps: z
    .int({ error: 'must be a whole number of model steps' })
    .min(1, { error: 'must be at least 1' })
    .max(MAX_MODEL_STEPS, { error: `must be at most ${MAX_MODEL_STEPS}` })
    .optional(),
  budgetDollars: z
    .number({ error: 'must be a number of dollars' })
    .positive({ error: 'must be more than 0 dollars' })
    .max(1_000_000, { error: 'must be at most 1000000 dollars' })
    .optional(),
  /** Whether a long conversation is compacted before it outgrows the model's context window. */
  autoCompact: z.boolean({ error: 'must be true or false' }).optional(),
  /** The model that writes compaction summaries, as `provider:model`; the Run's own by default. */
  compactionModel: z
    .string({ error: 'must be a string such as "openai:gpt-4o-mini"' })
    .regex(/^[a-z][a-z0-9_-]*:.+$/, {
      error: 'must be provider:model, such as "openai:gpt-4o-mini"',
    })
    .optional(),
})

/** The schema of a program. */
export const agentProgramSchema = z.discriminatedUnion(
  'kind',
  [echoProgram, scriptedProgram, llmProgram],
  {
    error: (issue) => {
      if (typeof issue.input !== 'object' || issue.input === null || Array.isArray(issue.input)) {
        return 'must be an object naming its kind, such as {"kind": "echo"}'
      }
      if (issue.code !== 'invalid_union') return undefined
      const kind = (issue.input as { kind?: unknown } | undefined)?.kind
      return `must be one of ${AGENT_PROGRAM_KINDS.map((name) => JSON.stringify(name)).join(', ')} (got ${kind === undefined ? 'nothing' : JSON.stringify(kind)})`
    },
  },
)

/** A program, as a definition holds it. */
export type AgentProgram = z.output<typeof agentProgramSchema>
