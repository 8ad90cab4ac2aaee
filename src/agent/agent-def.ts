/**
 * @module agent/agent-def
 * An agent's definition: plain, versioned, portable data (who it is, what it may use, what it
 * runs). It is checked once, when it enters eitri, and is frozen from then on; its hash names
 * exactly one definition, whoever wrote it and in whatever key order.
 */
import { createHash } from 'node:crypto'
import { z } from 'zod'
import { EitriError } from '../errors/eitri-error.ts'
import { ACCESS_LEVELS, type AccessLevel } from '../ports/access-context.ts'
import { TOOL_NAME_PATTERN } from '../tool/define-tool.ts'
import { fieldPath } from '../tool/validate-input.ts'
import { agentProgramSchema, type AgentProgram } from './agent-program.ts'
import { canonicalJson } from './canonical-json.ts'
import { deepFreeze } from './deep-freeze.ts'
import { findNonPlainData } from './plain-data.ts'

/** An agent id: lower case, starting with a letter, at most 64 characters. */
export const AGENT_ID_PATTERN = /^[a-z][a-z0-9_-]{0,63}$/

/**
 * Every status of a definition. `available` agents may be hired; `unavailable` ones are kept
 * but not hired for now; `retired` ones stay only so the Runs that used them keep a readable
 * provenance, and are never hired again.
 */
export const AGENT_STATUSES = Object.freeze(['available', 'unavailable', 'retired'] as const)

/** One of {@link AGENT_STATUSES}. */
export type AgentStatus = (typeof AGENT_STATUSES)[number]

/** The longest prompt a definition holds, in characters. */
export const MAX_AGENT_PROMPT_CHARS = 200_000

/** The most skills, or tools, one definition names. */
export const MAX_AGENT_NAMES = 256

/** A definition, checked, with its defaults applied, and frozen. */
export interface AgentDef {
  readonly id: string
  /** @default 1 */
  readonly version: number
  /** @default 'available' */
  readonly status: AgentStatus
  /** A name for people. */
  readonly name?: string
  /** What the agent is told before its task (used by model programs). */
  readonly prompt?: string
  /** What the agent is good at, for `select`: sorted, each once. @default [] */
  readonly skills: readonly string[]
  /** The only tools its Runs may call: sorted, each once. @default [] (none) */
  readonly tools: readonly string[]
  /**
   * The most access its Runs get; a Run gets the lower of this and its parent's.
   * @default 'read-only'
   */
  readonly access: AccessLevel
  /** Which model a model program uses. */
  readonly modelPolicy?: { readonly provider: string; readonly model: string }
  readonly program: Readonly<AgentProgram>
  /** Anything else, as plain JSON. @default {} */
  readonly metadata: Readonly<Record<string, unknown>>
}

/** Why an `undefined` field of a required value failed, or what else is wrong with it. */
function required(otherwise: string) {
  return (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : otherwise)
}

const lowerName = (what: string) =>
  z.string({ error: required(`must be a string (${what})`) }).regex(AGENT_ID_PATTERN, {
    error: `must be lower case letters, digits, "-" or "_", start with a letter and be at most 64 characters (${what})`,
  })

/** A set of names, written as an array: kept sorted and each once, so order never matters. */
const nameSet = (name: z.ZodString, what: string) =>
  z
    .array(name, { error: `must be an array of ${what}` })
    .max(MAX_AGENT_NAMES, { error: `names at most ${MAX_AGENT_NAMES} ${what}` })
    .default([])
    .transform((names) => [...new Set(names)].sort())

/** The schema of a definition as written; its output has the defaults applied. */
export const agentDefSchema = z.strictObject(
  {
    id: lowerName('such as "code-reviewer"'),
    version: z
      .int({ error: 'must be a positive whole number' })
      .min(1, { error: 'must be a positive whole number' })
      .default(1),
    status: z
      .enum(AGENT_STATUSES, { error: `must be one of ${AGENT_STATUSES.join(', ')}` })
      .default('available'),
    name: z
      .string({ error: 'must be a string' })
      .min(1, { error: 'must not be empty' })
      .max(200, {
        error: 'must be at most 200 characters',
      })
      .optional(),
    prompt: z
      .string({ error: 'must be a string' })
      .max(MAX_AGENT_PROMPT_CHARS, {
        error: `must be at most ${MAX_AGENT_PROMPT_CHARS} characters`,
      })
      .optional(),
    skills: nameSet(lowerName('a skill name such as "review"'), 'skill names'),
    tools: nameSet(
      z.string().regex(TOOL_NAME_PATTERN, {
        error: 'must be a tool name: lower snake case such as "read_file"',
      }),
      'tool names',
    ),
    access: z
      .enum(ACCESS_LEVELS, { error: `must be one of ${ACCESS_LEVELS.join(', ')}` })
      .default('read-only'),
    modelPolicy: z
      .strictObject(
        {
          provider: lowerName('a provider name such as "anthropic"'),
          model: z
            .string({ error: required('must be a string (the model name)') })
            .min(1, { error: 'must not be empty' })
            .max(200, { error: 'must be at most 200 characters' }),
        },
        {
          error: (issue) =>
            issue.code === 'unrecognized_keys'
              ? 'unknown key; a model policy takes only provider and model'
              : issue.code === 'invalid_type'
                ? 'must be an object {"provider": …, "model": …}'
                : undefined,
        },
      )
      .optional(),
    program: agentProgramSchema,
    metadata: z
      .record(z.string(), z.unknown(), { error: 'must be an object (plain JSON)' })
      .default({}),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? 'unknown key; an agent definition takes only id, version, status, name, prompt, skills, tools, access, modelPolicy, program and metadata (check the spelling)'
        : issue.code === 'invalid_type'
          ? 'must be an object (an agent definition)'
          : undefined,
  },
)

/** What an author writes: everything with a default may be left out. */
export type AgentDefInput = z.input<typeof agentDefSchema>

/** One field of a definition that is wrong, and why. */
export interface AgentDefProblem {
  /** The field's path, such as `agents[2].program.repy`. */
  readonly field: string
  readonly reason: string
}

/** A checked definition, or every problem found. */
export type AgentDefCheck =
  | { readonly ok: true; readonly def: AgentDef }
  | { readonly ok: false; readonly problems: readonly AgentDefProblem[] }

/**
 * Checks `value` as a definition. Never throws. `at` is where the value sits in what the caller
 * read (`['agents', 2]`), so each problem names its full path.
 */
export function checkAgentDef(
  value: unknown,
  at: readonly (string | number)[] = [],
): AgentDefCheck {
  const notPlain = findNonPlainData(value, at)
  if (notPlain !== undefined) {
    return { ok: false, problems: [{ field: pathText(notPlain.path), reason: notPlain.reason }] }
  }
  // A copy, so freezing never reaches the caller's objects and the caller cannot change ours.
  const copy: unknown = JSON.parse(JSON.stringify(value))
  const parsed = agentDefSchema.safeParse(copy)
  if (!parsed.success) {
    const problems: AgentDefProblem[] = []
    for (const issue of parsed.error.issues) {
      const path = [...at, ...(issue.path as (string | number)[])]
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys)
          problems.push({ field: pathText([...path, key]), reason: issue.message })
      } else problems.push({ field: pathText(path), reason: issue.message })
    }
    return { ok: false, problems }
  }
  if (parsed.data.program.kind === 'llm' && parsed.data.modelPolicy === undefined) {
    const field = pathText([...at, 'modelPolicy'])
    const reason =
      'is required by an llm program: name the model, such as {"provider": "anthropic", "model": "claude-sonnet-4-5"}'
    return { ok: false, problems: [{ field, reason }] }
  }
  // The schema's optional fields come out as `?: T | undefined`; the copy of plain data above
  // never holds an undefined, so the narrower type is the true one.
  const def = deepFreeze(parsed.data as AgentDef)
  checkedDefs.add(def)
  return { ok: true, def }
}

/** Definitions this module checked and deep-froze: their hash cannot change, so it is kept. */
const checkedDefs = new WeakSet<AgentDef>()
const checkedHashes = new WeakMap<AgentDef, string>()

/**
 * A definition, checked, with its defaults applied, and frozen.
 *
 * @throws EitriError `invalid_input` naming every wrong field and why.
 * @example
 * const def = parseAgentDef({ id: 'echoer', program: { kind: 'echo' } })
 * def.version // 1
 */
export function parseAgentDef(value: unknown): AgentDef {
  const check = checkAgentDef(value)
  if (check.ok) return check.def
  throw invalidAgentDef(value, check.problems)
}

/** The error for a definition that failed; `where` says where it came from, when known. */
export function invalidAgentDef(
  value: unknown,
  problems: readonly AgentDefProblem[],
  where = '',
): EitriError {
  const id = (value as { id?: unknown } | null | undefined)?.id
  const named = typeof id === 'string' ? ` "${id}"` : ''
  return new EitriError(
    'invalid_input',
    `Agent definition${named}${where} is invalid:\n${problems.map((problem) => `- ${problem.field}: ${problem.reason}`).join('\n')}\nFix these fields and try again.`,
    {
      data: {
        ...(typeof id === 'string' ? { id } : {}),
        fields: problems.map((problem) => problem.field),
      },
    },
  )
}

/**
 * The sha256 (hex) of a definition's canonical JSON, with its defaults applied: two equal
 * definitions hash the same however they were written.
 *
 * @throws EitriError `invalid_input` when `def` is not a valid definition.
 */
export function agentDefHash(def: AgentDef | AgentDefInput): string {
  // Every hire hashes its definition; checking it again each time cost a 1,000-Run burst about
  // half a millisecond a hire on the thread.
  const known = checkedHashes.get(def as AgentDef)
  if (known !== undefined) return known
  const hash = createHash('sha256')
    .update(canonicalJson(parseAgentDef(def)))
    .digest('hex')
  if (checkedDefs.has(def as AgentDef)) checkedHashes.set(def as AgentDef, hash)
  return hash
}

function pathText(path: readonly (string | number)[]): string {
  return path.length === 0 ? '(the definition)' : fieldPath(path)
}
