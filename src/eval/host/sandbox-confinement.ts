/**
 * @module eval/host/sandbox-confinement
 * The code sandbox's process runs inside bubblewrap, as a second wall behind the V8 isolate: a
 * guest that broke out of its isolate would hold a Node process, and that process can see no
 * network (not even loopback), no workspace, no home, no host process and no secret file. It
 * gets a read-only minimal system (/usr and the /etc allowlist), a small private /tmp, an empty
 * environment, no capabilities and no user namespace of its own, and only these files of
 * eitri's: the Node that runs it, eitri's own sources and package.json, and the packages the
 * sandbox imports (isolated-vm, acorn, zod and what they depend on), each read-only at its own
 * path. Every capability (files, http, shell, drive, tools) is served by the server over the
 * sandbox's pipes, so it needs no other file. A root caller's sandbox runs as `nobody`; sources
 * `nobody` cannot reach (a checkout under a private home) are shown to it by caller mounts.
 *
 * The pipes survive: bubblewrap keeps the descriptors it inherits without close-on-exec, and
 * the server's pipes are such descriptors at 0 and 2–5 in the process it starts.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { EitriError } from '../../errors/eitri-error.ts'
import { procArgs, readOnlySystemArgs } from '../../bubblewrap/bwrap-args.ts'
import { CallerMounts, mountingLaunch } from '../../bubblewrap/caller-mounts.ts'
import { explainProbeFailure } from '../../bubblewrap/jail-probe.ts'
import { jailIdentity, type HostIdentity } from '../../bubblewrap/jail-identity.ts'

/**
 * How the sandbox process runs: `bubblewrap` (the default) confines it as above; `none` runs it
 * as a plain child of the server, with the isolate as the only wall (for hosts where bubblewrap
 * cannot run, and only when a library caller says so explicitly).
 */
export type SandboxConfinement = 'bubblewrap' | 'none'

/** The packages the sandbox process imports; what they depend on is found from their manifests. */
export const SANDBOX_PACKAGES: readonly string[] = ['isolated-vm', 'acorn', 'zod']

/** The size of the sandbox's private /tmp (nothing of eitri's writes there). */
const SANDBOX_TMP_BYTES = 8 * 1024 * 1024

/** The path the launch programs are looked up on (bubblewrap clears it for the sandbox). */
const LAUNCH_PATH = '/usr/local/bin:/usr/bin:/bin'

/** One file or folder the sandbox may read, and where it appears. */
export interface SandboxBind {
  readonly source: string
  readonly target: string
}

/** What starting the sandbox process takes. */
export interface SandboxLaunch {
  readonly command: string
  readonly args: readonly string[]
  readonly env: Record<string, string>
  /** Set when the server is root and starts bubblewrap as `nobody` directly (no caller mounts). */
  readonly uid?: number
  readonly gid?: number
  /** True when it runs inside bubblewrap. */
  readonly jailed: boolean
  /** Removes the caller's mount points; call once the process ended. Idempotent. */
  release(): void
}

/** What {@link sandboxLaunch} starts. */
export interface SandboxLaunchOptions {
  /** The Node that runs the script. */
  readonly nodePath: string
  readonly nodeArgs: readonly string[]
  /** The script Node runs (the sandbox's entry, or a test's probe). */
  readonly script: string
  readonly confinement: SandboxConfinement
  /** The bubblewrap program. @default 'bwrap' */
  readonly bwrap?: string | undefined
  /** More files the sandbox may read (a test's probe script). */
  readonly extraReadable?: readonly string[] | undefined
  /** @default this process's ({@link jailIdentity}) */
  readonly identity?: HostIdentity | undefined
}

/**
 * The command that starts `script` with Node, confined or not.
 *
 * @throws EitriError `jail_unavailable` when the files the sandbox needs cannot be shown to it.
 */
export function sandboxLaunch(options: SandboxLaunchOptions): SandboxLaunch {
  const nodeCommand = [options.nodePath, ...options.nodeArgs, options.script]
  if (options.confinement === 'none') {
    const [command = options.nodePath, ...args] = nodeCommand
    return { command, args, env: {}, jailed: false, release: () => undefined }
  }
  const identity = options.identity ?? jailIdentity()
  const readable = sandboxReadable([
    options.nodePath,
    process.execPath,
    options.script,
    ...(options.extraReadable ?? []),
  ])
  const callerMounts = new CallerMounts(identity)
  let reached: ReturnType<CallerMounts['reach']>
  try {
    reached = callerMounts.reach(readable.map((bind) => bind.source))
  } catch (error) {
    callerMounts.close()
    throw error
  }
  const binds = readable.map((bind, index) => ({
    source: reached.paths[index] ?? bind.source,
    target: bind.target,
  }))
  const args = buildSandboxBwrapArgs(binds, nodeCommand)
  const bwrap = options.bwrap ?? 'bwrap'
  const release = (): void => callerMounts.close()
  const env = { PATH: LAUNCH_PATH }
  if (identity.dropped && reached.mounts.length > 0) {
    const launch = mountingLaunch(bwrap, args, identity, reached.mounts)
    return { ...launch, env, jailed: true, release }
  }
  return {
    command: bwrap,
    args,
    env,
    ...(identity.dropped ? { uid: identity.uid, gid: identity.gid } : {}),
    jailed: true,
    release,
  }
}

/**
 * bubblewrap's arguments for the sandbox process: `binds` read-only, then `command`. Pure, so a
 * unit test can check it flag by flag.
 */
export function buildSandboxBwrapArgs(
  binds: readonly SandboxBind[],
  command: readonly string[],
): string[] {
  const args = [
    // New user, PID, network, IPC, UTS and cgroup namespaces: no network at all (not even the
    // host's loopback), no host process to see or signal, no host SysV IPC.
    '--unshare-all',
    // A user namespace even when started by root, and none nested inside it.
    '--unshare-user',
    '--disable-userns',
    // No capabilities inside, so no remount of a read-only bind.
    '--cap-drop',
    'ALL',
    // No controlling terminal to inject keystrokes into.
    '--new-session',
    // When the server dies or kills bubblewrap, the whole PID namespace goes with it.
    '--die-with-parent',
    // Nothing of the server's environment: no secret is ever in the sandbox.
    '--clearenv',
    ...readOnlySystemArgs(),
    // V8 reads /proc/self (the main thread's stack); this /proc shows only the sandbox's own.
    ...procArgs(),
    '--dev',
    '/dev',
    '--size',
    String(SANDBOX_TMP_BYTES),
    '--tmpfs',
    '/tmp',
  ]
  for (const bind of binds) args.push('--ro-bind', bind.source, bind.target)
  args.push('--chdir', '/', '--', ...command)
  return args
}

/**
 * What the sandbox must read besides the system, each at the path Node will look for it:
 * `files` (the Node binary, the script), eitri's package.json and the folder of its sources
 * (`src` from a clone, `dist` when built), and {@link SANDBOX_PACKAGES} with their dependencies.
 * Paths under /usr are left out (already there).
 *
 * @throws EitriError `jail_unavailable` when one of them cannot be found.
 */
export function sandboxReadable(files: readonly string[]): SandboxBind[] {
  const binds = new Map<string, SandboxBind>()
  const add = (source: string, target: string = source): void => {
    if (target === '/usr' || target.startsWith('/usr/')) return
    binds.set(target, { source, target })
  }
  for (const file of files) add(realPath(file))
  const here = realPath(fileURLToPath(import.meta.url))
  const root = packageRoot(here)
  add(path.join(root, 'package.json'))
  const [sources] = path.relative(root, here).split(path.sep)
  if (sources !== undefined) add(path.join(root, sources))
  const seen = new Set<string>()
  const visit = (name: string, from: string): void => {
    const lookedUp = packageFolder(name, from)
    const real = realPath(lookedUp)
    if (seen.has(real)) return
    seen.add(real)
    add(real)
    // A linked package (a workspace, pnpm) is found at its link; Node then goes on from there.
    if (lookedUp !== real) add(real, lookedUp)
    for (const dependency of manifestDependencies(real)) visit(dependency, real)
  }
  for (const name of SANDBOX_PACKAGES) visit(name, path.dirname(here))
  // A folder before what lies inside it, so no bind hides another.
  return [...binds.values()].sort((a, b) => a.target.length - b.target.length)
}

function realPath(file: string): string {
  try {
    return fs.realpathSync(file)
  } catch {
    throw missing(`${file} does not exist`)
  }
}

/** The folder of the package.json nearest above `file` (Node reads its `type`). */
function packageRoot(file: string): string {
  for (let folder = path.dirname(file); ; folder = path.dirname(folder)) {
    if (fs.existsSync(path.join(folder, 'package.json'))) return folder
    if (folder === path.dirname(folder)) throw missing(`no package.json above ${file}`)
  }
}

/** Where Node finds package `name` imported from `from`: the nearest node_modules that has it. */
function packageFolder(name: string, from: string): string {
  for (let folder = from; ; folder = path.dirname(folder)) {
    const candidate = path.join(folder, 'node_modules', name)
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate
    if (folder === path.dirname(folder)) throw missing(`the package ${name} is not installed`)
  }
}

/** The runtime dependencies a package's manifest names (none when it cannot be read). */
function manifestDependencies(folder: string): string[] {
  let manifest: unknown
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8'))
  } catch {
    return []
  }
  const dependencies = (manifest as { dependencies?: unknown } | null)?.dependencies
  return dependencies !== null && typeof dependencies === 'object' ? Object.keys(dependencies) : []
}

function missing(detail: string): EitriError {
  return new EitriError(
    'jail_unavailable',
    `js_eval's sandbox cannot start, so no code ran: it needs files it cannot be shown (${detail}). To fix: reinstall eitri with its dependencies (npm install).`,
  )
}

/**
 * Why a confined sandbox that never said it was ready did not start, when bubblewrap (or the
 * caller's mount step) is what failed; undefined when the sandbox itself failed.
 */
export function confinementFailure(failure: {
  spawnError?: string | undefined
  exitCode: number | null
  stderr: string
}): EitriError | undefined {
  const setup =
    failure.spawnError !== undefined ||
    /^bwrap: |^eitri: the jail cannot show|^(unshare|setpriv): /m.test(failure.stderr)
  if (!setup) return undefined
  const verdict = explainProbeFailure(failure)
  const { reason, fix } = verdict.available
    ? { reason: 'bubblewrap failed', fix: 'run eitri where bubblewrap works' }
    : verdict
  return new EitriError(
    'jail_unavailable',
    `js_eval's sandbox process runs inside bubblewrap and could not start there, so no code ran: ${reason}. To fix: ${fix}.`,
  )
}
