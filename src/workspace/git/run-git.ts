/**
 * @module workspace/git/run-git
 * The git program, run on eitri's own history repository: never the user's configuration,
 * hooks or repository.
 */
import { spawn } from 'node:child_process'
import { EitriError } from '../../errors/eitri-error.ts'

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
}

/**
 * git with no system or global configuration, hooks pointed at nothing, and every folder safe:
 * for eitri's own git commands and for git inside the jail alike.
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

/**
 * Runs git with `args`. Resolves with its status and output; `check` turns a nonzero status
 * into an error.
 *
 * @throws EitriError `tool_failed` when git is missing or `check` fails.
 */
export function runGit(
  target: GitTarget,
  args: readonly string[],
  options: { input?: string | Buffer; check?: boolean; allowStatus?: readonly number[] } = {},
): Promise<GitOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...args], {
      env: gitEnvironment(target),
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(target.workTree === undefined ? {} : { cwd: target.workTree }),
    })
    const stdout: Buffer[] = []
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.once('error', (error) =>
      reject(
        new EitriError(
          'tool_failed',
          `git could not be started (${error.message}); install it: apt-get install git`,
        ),
      ),
    )
    child.once('close', (status) => {
      const output = { status: status ?? -1, stdout: Buffer.concat(stdout), stderr }
      const allowed = options.allowStatus ?? [0]
      if (options.check !== false && !allowed.includes(output.status)) {
        reject(
          new EitriError(
            'tool_failed',
            `git ${args[0] ?? ''} failed (${output.status}): ${stderr.trim().slice(0, 500)}`,
          ),
        )
      } else {
        resolve(output)
      }
    })
    child.stdin.on('error', () => undefined)
    child.stdin.end(options.input ?? '')
  })
}
