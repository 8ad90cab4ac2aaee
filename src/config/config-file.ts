/**
 * @module config/config-file
 * The configuration file: JSON, outside the workspace, so no agent can rewrite its own
 * permissions. Unknown keys are errors, so a typo never silently weakens a rule.
 */
import fs from 'node:fs/promises'
import { z } from 'zod'
import { EitriError } from '../errors/eitri-error.ts'
import { ACCESS_LEVELS } from '../ports/access-context.ts'
import { describeIssues } from '../tool/validate-input.ts'
import { keyVariables, modelsConfigShape } from './models-config.ts'

const accessLevel = z
  .string()
  .refine((value) => (ACCESS_LEVELS as readonly string[]).includes(value), {
    error: (issue) =>
      `unknown access ${JSON.stringify(issue.input)}: one of ${ACCESS_LEVELS.join(', ')}`,
  })

/** A mode users add: a name, what it is for, and an optional access cap. */
const modeSchema = z.strictObject({
  name: z
    .string()
    .regex(
      /^[a-z][a-z0-9_-]{0,31}$/,
      'a mode name is lower case letters, digits, - and _, at most 32 characters',
    )
    .refine((name) => name !== 'default', {
      error: '"default" is reserved: it is the absence of a mode',
    }),
  description: z.string().min(1, 'needs a description: it tells the agent what the mode is for'),
  access: accessLevel.optional(),
})

/** A permission rule such as `shell(npm run test:*)` or `write_file(src/**)`. */
const ruleText = z
  .string()
  .regex(
    /^[a-z][a-z0-9_]{0,63}(\(.*\S.*\))?$/s,
    'a rule is TOOL or TOOL(SPECIFIER), such as shell(npm test *) or write_file(src/**)',
  )

const rulesSchema = z.strictObject({
  allow: z
    .array(
      z.union([ruleText, z.strictObject({ rule: ruleText, approval: z.enum(['ask', 'none']) })]),
    )
    .default([]),
  deny: z.array(ruleText).default([]),
})

/** A host name as the HTTP allowlist takes it: `api.github.com`, or `*.example.com`. */
const hostPattern = z
  .string()
  .transform((host) => host.toLowerCase())
  .pipe(
    z
      .string()
      .regex(
        /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/,
        'a host name such as api.github.com, or *.example.com for its subdomains',
      ),
  )

const environmentName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name such as GITHUB_TOKEN')

const secretBinding = z.strictObject({
  domain: hostPattern.refine((host) => !host.startsWith('*.'), {
    error: 'a secret is bound to one exact host, not a pattern',
  }),
  header: z
    .string()
    .transform((header) => header.toLowerCase())
    .pipe(z.string().regex(/^[a-z0-9!#$%&'*+.^_`|~-]+$/, 'a header name such as authorization')),
})

const httpSchema = z
  .strictObject({
    allow: z.array(hostPattern).default([]),
    maxResponseBytes: z
      .number()
      .int()
      .positive()
      .max(1024 * 1024 * 1024)
      .default(5 * 1024 * 1024),
    timeoutMs: z.number().int().positive().max(600_000).default(30_000),
  })
  .default({ allow: [], maxResponseBytes: 5 * 1024 * 1024, timeoutMs: 30_000 })

const MIB = 1024 * 1024

/** The defaults of the `snapshots` section. */
export const SNAPSHOT_DEFAULTS = Object.freeze({
  keep: 200,
  maxAgeDays: 30,
  maxFileBytes: 64 * 1024 * 1024,
})

const snapshotsSchema = z
  .strictObject({
    keep: z
      .number()
      .int()
      .min(1, 'keep at least 1 snapshot')
      .default(SNAPSHOT_DEFAULTS.keep)
      .describe('The most snapshots of main kept (one per call that may change it).'),
    maxAgeDays: z
      .number()
      .positive()
      .default(SNAPSHOT_DEFAULTS.maxAgeDays)
      .describe('Snapshots older than this many days are pruned (the newest is always kept).'),
    maxFileBytes: z
      .number()
      .int()
      .positive()
      .default(SNAPSHOT_DEFAULTS.maxFileBytes)
      .describe('Files larger than this are left out of snapshots and forks, and listed.'),
  })
  .default({ ...SNAPSHOT_DEFAULTS })

/** What one jailed command may bring back to the workspace, by apparent size. */
const jailSchema = z
  .strictObject({
    maxFileBytes: z
      .number()
      .int()
      .positive()
      .default(64 * MIB)
      .describe('The largest file a jailed command brings back.'),
    maxCommandBytes: z
      .number()
      .int()
      .positive()
      .default(256 * MIB)
      .describe("All of one jailed command's files together."),
    maxKeptBytes: z
      .number()
      .int()
      .positive()
      .default(4 * 1024 * MIB)
      .describe(
        "All a fork's jail keeps across commands and restarts (ignored outputs such as dist/ or node_modules, git's files), by disk use.",
      ),
    memoryBytes: z
      .number()
      .int()
      .min(16 * MIB, 'give a jailed command at least 16 MiB (16777216)')
      .default(4 * 1024 * MIB)
      .describe(
        'Memory a jailed command may use: all its processes together where eitri can create a memory cgroup, else each process (RLIMIT_DATA).',
      ),
  })
  .default({
    maxFileBytes: 64 * MIB,
    maxCommandBytes: 256 * MIB,
    maxKeptBytes: 4 * 1024 * MIB,
    memoryBytes: 4 * 1024 * MIB,
  })

const milliseconds = (fallback: number) =>
  z.number().int().min(100).max(3_600_000).default(fallback)

const runsSchema = z
  .strictObject({
    leaseTtlMs: milliseconds(15_000).describe(
      'How long a Run stays held after its process stops renewing it, before another eitri ends it as interrupted.',
    ),
    heartbeatMs: milliseconds(5_000).describe('How often a process renews the leases of its Runs.'),
    sweepMs: milliseconds(30_000).describe(
      'How often a process ends the Runs whose leases lapsed.',
    ),
    maxActive: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(32)
      .describe('The most Runs (children included) one session may have running at once.'),
    maxDepth: z
      .number()
      .int()
      .min(1)
      .max(64)
      .default(4)
      .describe(
        'How deep Runs may hire Runs: a Run hired by the session is at depth 1, its children at 2.',
      ),
    sessionBudgetDollars: z
      .number()
      .positive()
      .max(1_000_000)
      .default(10)
      .describe(
        'The most dollars the model Runs one session (an MCP connection, an `eitri run`) hires may spend together, children included: each Run it hires takes its budget out of what is left.',
      ),
  })
  .refine((runs) => runs.heartbeatMs < runs.leaseTtlMs, {
    error:
      'heartbeatMs must be shorter than leaseTtlMs (about a third), or leases lapse between heartbeats',
  })
  .default({
    leaseTtlMs: 15_000,
    heartbeatMs: 5_000,
    sweepMs: 30_000,
    maxActive: 32,
    maxDepth: 4,
    sessionBudgetDollars: 10,
  })

/** The configuration file's sections. Later capabilities add theirs here. */
const configObject = z.strictObject({
  protectedPaths: z
    .array(z.string().min(1))
    .default([])
    .describe('Extra workspace paths (globs, anchored at the root) that tools may not write.'),
  http: httpSchema.describe("What js_eval's http.fetch may reach."),
  env: z
    .array(environmentName)
    .default([])
    .describe("Environment variables js_eval's env.get may read."),
  secrets: z
    .record(environmentName, secretBinding)
    .default({})
    .describe(
      'Secrets (read from the environment) and the one host and header each may be sent to.',
    ),
  access: accessLevel.optional().describe('The session access setting; --access overrides it.'),
  approval: z
    .enum(['untrusted', 'on-request', 'never'])
    .optional()
    .describe('When to ask a person; --approval overrides it.'),
  modes: z
    .array(modeSchema)
    .default([])
    .refine((modes) => new Set(modes.map((mode) => mode.name)).size === modes.length, {
      error: 'mode names must be unique',
    }),
  rules: rulesSchema.default({ allow: [], deny: [] }),
  jail: jailSchema.describe(
    'Bounds on a jailed command: the memory it may use, what it brings back to the workspace.',
  ),
  agents: z
    .array(z.record(z.string(), z.unknown()))
    .default([])
    .describe(
      'The default roster: agent definitions that agent_hire and `eitri run` hire from when they name no roster file.',
    ),
  runs: runsSchema.describe(
    'How Runs are held: a Run whose process died is ended as interrupted once its lease lapses.',
  ),
  ...modelsConfigShape,
  snapshots: snapshotsSchema.describe(
    'How snapshots of main are kept: `eitri log` lists them, `eitri restore` uses them, `eitri forks --prune` prunes them.',
  ),
})

/** The configuration file's schema: its sections, and the checks across them. */
export const configSchema = configObject.superRefine((config, issues) => {
  // A model key goes to its provider's client only: js_eval's env.get would hand it to the guest.
  const keys = keyVariables(config.providers)
  config.env.forEach((name, index) => {
    const holder = keys.get(name)
    if (holder === undefined) return
    issues.addIssue({
      code: 'custom',
      path: ['env', index],
      message: `${name} holds the model key of ${holder}, which never reaches js_eval; remove it from "env" (to call that API from js_eval, bind the key under "secrets" to its host and header)`,
    })
  })
})

/** A mode as configured. */
export type ConfiguredMode = z.output<typeof modeSchema>
/** The rules as configured. */
export type ConfiguredRules = z.output<typeof rulesSchema>

/** A loaded, validated configuration. */
export type EitriConfig = z.output<typeof configSchema>

/**
 * Reads and validates the configuration file. A missing file means the defaults.
 *
 * @throws EitriError `config_invalid` naming the file and each bad field.
 */
export async function loadConfig(configPath: string): Promise<EitriConfig> {
  let text: string
  try {
    text = await fs.readFile(configPath, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return configSchema.parse({})
    throw new EitriError(
      'config_invalid',
      `Cannot read the configuration file ${configPath}: ${(error as Error).message}`,
    )
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new EitriError(
      'config_invalid',
      `The configuration file ${configPath} is not valid JSON: ${(error as Error).message}`,
    )
  }
  const parsed = configSchema.safeParse(json)
  if (!parsed.success) {
    throw new EitriError(
      'config_invalid',
      `The configuration file ${configPath} is invalid:\n${describeIssues(parsed.error)}`,
    )
  }
  return parsed.data
}
