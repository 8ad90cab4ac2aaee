/**
 * @module cli/parse-command-line
 * Turns argv into a command and its options, strictly: an unknown flag is an error.
 */
import { parseArgs } from 'node:util'
import { APPROVAL_POLICIES, type ApprovalPolicy } from '../access/approval.ts'
import { ACCESS_LEVELS, type AccessLevel } from '../ports/access-context.ts'
import { UsageError } from './cli-io.ts'

/** The options every command accepts. */
export interface CommandLine {
  readonly command: string | undefined
  readonly positionals: readonly string[]
  readonly workspace: string | undefined
  readonly http: string | undefined
  readonly token: string | undefined
  /** `--no-token`: serve HTTP on loopback without a token, knowingly. */
  readonly noToken: boolean
  readonly tools: readonly string[] | undefined
  readonly json: boolean
  readonly stateDir: string | undefined
  readonly config: string | undefined
  readonly store: string | undefined
  readonly access: AccessLevel | undefined
  readonly approval: ApprovalPolicy | undefined
  readonly mode: string | undefined
  /** `--fork F`: the line a command acts on. */
  readonly fork: string | undefined
  /** `--isolate`: every session on a fresh fork of main. */
  readonly isolate: boolean
  /** `--force`: restore also what a person changed since the snapshot. */
  readonly force: boolean
  /** `--prune`: forks, delete the snapshots beyond the retention. */
  readonly prune: boolean
  /** `--status S`: runs, only the Runs with this status. */
  readonly status: string | undefined
  /** `--agent ID`: run, the agent to hire. */
  readonly agent: string | undefined
  /** `--task TEXT`: run, what the agent is to do. */
  readonly task: string | undefined
  /** `--roster FILE`: run, the roster file to hire from (default: the configuration's agents). */
  readonly roster: string | undefined
  /** `--settlement POLICY`: run, what becomes of the Run's changes. */
  readonly settlement: string | undefined
  /** `--env NAME`: bench, the environment to run. */
  readonly env: string | undefined
  /** `--model PROVIDER:MODEL`: bench, the root agent's model (`scripted`: the environment's script). */
  readonly model: string | undefined
  /** `--yes`: run, merge the Run's changes into main without asking (nothing else is approved). */
  readonly yes: boolean
  readonly help: boolean
  readonly version: boolean
}

const OPTIONS = {
  workspace: { type: 'string' },
  http: { type: 'string' },
  token: { type: 'string' },
  'no-token': { type: 'boolean', default: false },
  tools: { type: 'string' },
  json: { type: 'boolean', default: false },
  'state-dir': { type: 'string' },
  config: { type: 'string' },
  store: { type: 'string' },
  access: { type: 'string' },
  approval: { type: 'string' },
  mode: { type: 'string' },
  fork: { type: 'string' },
  isolate: { type: 'boolean', default: false },
  force: { type: 'boolean', default: false },
  prune: { type: 'boolean', default: false },
  status: { type: 'string' },
  agent: { type: 'string' },
  task: { type: 'string' },
  roster: { type: 'string' },
  settlement: { type: 'string' },
  env: { type: 'string' },
  model: { type: 'string' },
  yes: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  version: { type: 'boolean', short: 'v', default: false },
} as const

/** @throws UsageError naming the flag that is wrong. */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  let parsed
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0] ?? 'invalid command line')
  }
  const { values, positionals } = parsed
  if (values['no-token'] && values.token !== undefined)
    throw new UsageError('--token and --no-token contradict each other: give one of them')
  const [command, ...rest] = positionals
  return {
    command,
    positionals: rest,
    workspace: values.workspace,
    http: values.http,
    token: values.token,
    noToken: values['no-token'],
    tools: values.tools === undefined ? undefined : splitNames(values.tools),
    json: values.json,
    stateDir: values['state-dir'],
    config: values.config,
    store: values.store,
    access: oneOf('--access', values.access, ACCESS_LEVELS),
    approval: oneOf('--approval', values.approval, APPROVAL_POLICIES),
    mode: values.mode,
    fork: values.fork,
    isolate: values.isolate,
    force: values.force,
    prune: values.prune,
    status: values.status,
    agent: values.agent,
    task: values.task,
    roster: values.roster,
    settlement: values.settlement,
    env: values.env,
    model: values.model,
    yes: values.yes,
    help: values.help,
    version: values.version,
  }
}

function oneOf<Value extends string>(
  flag: string,
  value: string | undefined,
  choices: readonly Value[],
): Value | undefined {
  if (value === undefined) return undefined
  if ((choices as readonly string[]).includes(value)) return value as Value
  throw new UsageError(`${flag} ${JSON.stringify(value)} is not one of: ${choices.join(', ')}`)
}

function splitNames(list: string): string[] {
  const names = list
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  if (names.length === 0)
    throw new UsageError('--tools needs at least one tool name, such as --tools read_file,grep')
  return names
}

/** Parses `--http [HOST:]PORT`. */
export function parseListenAddress(value: string): { host: string; port: number } {
  const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(value)
  const port = Number(match?.[2])
  if (match === null || !Number.isInteger(port) || port > 65535) {
    throw new UsageError(
      `--http takes [HOST:]PORT, such as 8080, 0 or 127.0.0.1:8080 (got ${JSON.stringify(value)})`,
    )
  }
  const host = match[1] ?? '127.0.0.1'
  return { host: host.startsWith('[') ? host.slice(1, -1) : host, port }
}
