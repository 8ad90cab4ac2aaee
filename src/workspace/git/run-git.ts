/**
 * @module workspace/git/run-git
 * The git program, run on eitri's own history repository: never the user's configuration,
 * hooks or repository.
 */
import { EitriError } from '../../errors/eitri-error.ts'
import { BoundedOutput } from '../../util/bounded-output.ts'
import { ByteCapture, startBounded } from '../../util/bounded-spawn.ts'

/**
 * Most bytes any git command of eitri may write when its caller set no bound of its own: far
 * above any blob, tree or diff a workspace holds, and still a bound, so a runaway command fails
 * with a clear error instead of exhausting the server's memory.
 */
export const MAX_GIT_OUTPUT_BYTES = 256 * 1024 * 1024
/** Characters of git's stderr kept (its head and tail): messages, not data. */
const GIT_STDERR_CHARS = 64 * 1024

/** Where git looks and what it reads besides. */
export interface GitTarget {
  /** eitri's history repository (bare). */
  readonly gitDir: string
  /** A folder git treats as the work tree (for snapshots of main). */
  readonly workTree?: string
  /** An index file of our own (one per line). */
  readonly indexFile?: string
}

/** A finished git command. */
export interface GitOutput {
  readonly status: number
  readonly stdout: Buffer
  readonly stderr: string
  /** True when git wrote more than `maxStdoutBytes` and was stopped (its status is then -1). */
  readonly overflowed?: boolean
}

/**
 * git with no system or global configuration, hooks pointed at nothing, every folder safe and
 * local transports only: for eitri's own git commands and for git inside the jail alike.
 */
export const GIT_WITHOUT_HOOKS: Readonly<Record<string, string>> = Object.freeze({
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_COUNT: '3',
  GIT_CONFIG_KEY_0: 'core.hooksPath',
  GIT_CONFIG_VALUE_0: '/dev/null',
  GIT_CONFIG_KEY_1: 'safe.directory',
  GIT_CONFIG_VALUE_1: '*',
  // A repository found by walking up must be a work tree's: a bare repository committed into
  // the workspace (with its own textconv or fsmonitor) is used only when named explicitly.
  GIT_CONFIG_KEY_2: 'safe.bareRepository',
  GIT_CONFIG_VALUE_2: 'explicit',
  GIT_TERMINAL_PROMPT: '0',
  // Only local transports, whatever any configuration allows: a transport is a program (an
  // `ext::` URL is a command line, `ssh` obeys ~/.ssh/config's ProxyCommand), and a read such
  // as `git cat-file` or `git show` fetches a missing object from a promisor remote on its own.
  // A configuration that names no program (a URL, `protocol.ext.allow`) must not run one.
  GIT_ALLOW_PROTOCOL: 'file',
})

/**
 * Settings eitri's own commands add to {@link GIT_WITHOUT_HOOKS} (not given to git in the jail:
 * they change what a person's `git status` shows). Settings in the environment reach the git a
 * command spawns inside a nested repository (git keeps them for submodule processes) and beat
 * that repository's own configuration: no fsmonitor program runs there, and `status` and `diff`
 * do not enter a nested repository at all. `git add` enters every repository its index records
 * whatever they say (to ask whether it is dirty), and that git runs the nested repository's
 * filters, which no setting can name in advance: so eitri's index never holds a nested
 * repository (history.ts).
 */
const OWN_SETTINGS: readonly (readonly [string, string])[] = [
  ['core.fsmonitor', 'false'],
  ['diff.ignoreSubmodules', 'all'],
  ['status.submoduleSummary', 'false'],
  ['submodule.recurse', 'false'],
]

/** The identity and isolation every git command of eitri runs with. */
export function gitEnvironment(target: GitTarget): Record<string, string> {
  const base = Number(GIT_WITHOUT_HOOKS.GIT_CONFIG_COUNT)
  const own: Record<string, string> = { GIT_CONFIG_COUNT: String(base + OWN_SETTINGS.length) }
  OWN_SETTINGS.forEach(([key, value], index) => {
    own[`GIT_CONFIG_KEY_${base + index}`] = key
    own[`GIT_CONFIG_VALUE_${base + index}`] = value
  })
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LC_ALL: 'C',
    GIT_DIR: target.gitDir,
    ...(target.workTree === undefined ? {} : { GIT_WORK_TREE: target.workTree }),
    ...(target.indexFile === undefined ? {} : { GIT_INDEX_FILE: target.indexFile }),
    // None of the user's or the system's configuration, and never a hook.
    ...GIT_WITHOUT_HOOKS,
    ...own,
    GIT_AUTHOR_NAME: 'eitri',
    GIT_AUTHOR_EMAIL: 'eitri@eitri.invalid',
    GIT_COMMITTER_NAME: 'eitri',
    GIT_COMMITTER_EMAIL: 'eitri@eitri.invalid',
  }
}

let commandsStarted = 0

/**
 * How many git commands {@link runGit} has started in this process (the object store's one
 * long-running reader aside): for tests and benches that check a path runs no git at all.
 * A count, not a time, so it holds on a loaded machine.
 */
export function gitCommandsStarted(): number {
  return commandsStarted
}

/**
 * Runs git with `args`, in a process group of its own (killed whole on abort or deadline).
 * Resolves with its status and output; `check` turns a nonzero status into an error.
 *
 * @throws EitriError `tool_failed` when git is missing or `check` fails; `cancelled` when
 *   `signal` aborted; `limit_exceeded` when git wrote more than {@link MAX_GIT_OUTPUT_BYTES}
 *   and the caller set no `maxStdoutBytes` of its own.
 */
export async function runGit(
  target: GitTarget,
  args: readonly string[],
  options: {
    input?: string | Buffer
    check?: boolean
    allowStatus?: readonly number[]
    /** Variables added to eitri's git environment (never the caller's own). */
    env?: Readonly<Record<string, string>>
    /** git is killed after this long (its status is then -1). */
    timeoutMs?: number
    /** git is killed once it wrote more than this to its output (`overflowed` says so). */
    maxStdoutBytes?: number
    /** Kills git (and what it started) and rejects with `cancelled`. */
    signal?: AbortSignal | undefined
  } = {},
): Promise<GitOutput> {
  const stdout = new ByteCapture(options.maxStdoutBytes ?? MAX_GIT_OUTPUT_BYTES)
  const stderrWindow = new BoundedOutput(GIT_STDERR_CHARS)
  commandsStarted += 1
  const exit = await startBounded('git', args, {
    env: { ...gitEnvironment(target), ...options.env },
    ...(target.workTree === undefined ? {} : { cwd: target.workTree }),
    stdin: options.input ?? '',
    stdout,
    stderr: stderrWindow,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
  }).exited
  if (exit.spawnError !== undefined)
    throw new EitriError(
      'tool_failed',
      `git could not be started (${exit.spawnError}); install it: apt-get install git`,
    )
  if (exit.cancelled) throw new EitriError('cancelled', `git ${args[0] ?? ''} was cancelled`)
  if (exit.overflowed && options.maxStdoutBytes === undefined)
    throw new EitriError(
      'limit_exceeded',
      `git ${args[0] ?? ''} wrote more than ${MAX_GIT_OUTPUT_BYTES} bytes and was stopped; the workspace holds something too large for eitri's history to read`,
    )
  const stderr = stderrWindow.text()
  const output = {
    status: exit.overflowed || exit.timedOut ? -1 : (exit.exitCode ?? -1),
    stdout: stdout.bytes(),
    stderr,
    ...(exit.overflowed ? { overflowed: true } : {}),
  }
  const allowed = options.allowStatus ?? [0]
  if (options.check !== false && !allowed.includes(output.status))
    throw new EitriError(
      'tool_failed',
      `git ${args[0] ?? ''} failed (${output.status}): ${stderr.trim().slice(0, 500)}`,
    )
  return output
}
