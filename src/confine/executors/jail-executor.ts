/**
 * @module confine/executors/jail-executor
 * The same child runner as the process executor, inside the bubblewrap jail: no network, no
 * host processes, the workspace read-only at `/workspace`, the scratch folder read-write at
 * `/scratch` (its working folder and `HOME`), the parent's Node read-only at
 * `/opt/eitri/node`, and the package roots of eitri and of the module read-only at their own
 * host paths, so imports resolve (from root, whatever of them `nobody` cannot reach, as in a
 * clone under a 0700 home, the jail mounts for it: bubblewrap/caller-mounts.ts). The jail's PID
 * namespace ends with it, so nothing outlives the deadline. The host's environment never enters.
 */
import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { EitriError } from '../../errors/eitri-error.ts'
import { childReport } from '../child/child-report.ts'
import { newMarker, type ConfinedRequest } from '../child/confined-protocol.ts'
import { EnvelopeReader } from '../child/envelope-reader.ts'
import type { Executor, ExecutorCall, ExecutorReport, ExecutorRunOptions } from './executor.ts'
import { changedFiles, snapshotFolder } from './folder-snapshot.ts'
import { MINIMAL_PATH } from '../child/minimal-environment.ts'
import { moduleTarget } from '../module-target.ts'
import { envelopeLimit } from '../result-text.ts'
import { packageRootOf, RUNNER_PATH } from '../child/runner-path.ts'
import { isWithinAny } from '../../util/relative-paths.ts'

/** Where the jail sees the parent's Node. */
export const JAIL_NODE_PATH = '/opt/eitri/node'
/** Where the jail sees the call's scratch folder. */
export const JAIL_SCRATCH_PATH = '/scratch'

/** A host path mounted inside the jail. */
export interface ConfiningJailBind {
  readonly source: string
  readonly target: string
  readonly writable: boolean
}

/** What the jail executor asks of a jail (the `Jail` of `src/jail` provides it). */
export interface ConfiningJail {
  /** Who jailed programs run as on the host; `dropped` when the host is root. */
  readonly identity: { readonly uid: number; readonly gid: number; readonly dropped: boolean }
  run(request: {
    readonly command: readonly string[]
    readonly access: 'read-only'
    readonly timeoutMs: number
    readonly maxOutputChars: number
    readonly environment: Readonly<Record<string, string>>
    readonly binds: readonly ConfiningJailBind[]
    readonly cwd: string
    readonly stdin: string
    readonly signal?: AbortSignal
  }): Promise<{
    readonly exitCode: number | null
    readonly signal: string | null
    readonly timedOut: boolean
    readonly cancelled: boolean
    readonly stdout: string
    readonly stderr: string
    readonly spawnError?: string
  }>
}

/**
 * The executor that runs each call in `jail`.
 *
 * @example
 * await using jail = new Jail({ tree, view })
 * const tool = confine(
 *   { module: import.meta.resolve('./render.ts'), export: 'render' },
 *   { name: 'render', description: '…', parameters, mode: 'container', executor: jailExecutor(jail) },
 * )
 */
export function jailExecutor(jail: ConfiningJail): Executor {
  return Object.freeze({
    name: 'jail',
    outOfProcess: true,
    allowsInheritedEnvironment: false,
    run: (call: ExecutorCall, options: ExecutorRunOptions = {}) =>
      runInJail(jail, call, options.signal),
  })
}

async function runInJail(
  jail: ConfiningJail,
  call: ExecutorCall,
  signal: AbortSignal | undefined,
): Promise<ExecutorReport> {
  const target = moduleTarget(call.target, 'jail')
  if (call.inheritedEnvironment !== undefined) {
    throw new EitriError(
      'invalid_definition',
      "The jail never lets the host's environment in: confine with env 'minimal'.",
    )
  }
  // From root the jail runs as nobody, which must be able to write its scratch folder.
  if (jail.identity.dropped) await chownTree(call.workdir, jail.identity.uid, jail.identity.gid)
  const before = await snapshotFolder(call.workdir)
  const marker = newMarker()
  const maxEnvelopeBytes = envelopeLimit(call.maxOutputBytes)
  const request: ConfinedRequest = {
    module: target.module,
    export: target.export,
    input: call.input,
    workdir: JAIL_SCRATCH_PATH,
    marker,
    maxOutputBytes: call.maxOutputBytes,
  }
  const roots = packageRoots(fileURLToPath(target.module))
  if (jail.identity.dropped) await assertEnterable(roots, jail.identity)
  const ran = await jail.run({
    command: [JAIL_NODE_PATH, RUNNER_PATH],
    access: 'read-only',
    timeoutMs: call.timeoutMs,
    // Room for the printed output, the envelope, and a note of what the runner dropped.
    maxOutputChars: call.maxOutputBytes + maxEnvelopeBytes + 1024,
    environment: {
      PATH: MINIMAL_PATH,
      HOME: JAIL_SCRATCH_PATH,
      LANG: 'C.UTF-8',
      TMPDIR: '/tmp',
    },
    binds: [
      { source: process.execPath, target: JAIL_NODE_PATH, writable: false },
      ...roots.map((root) => ({
        source: root,
        target: root,
        writable: false,
      })),
      { source: call.workdir, target: JAIL_SCRATCH_PATH, writable: true },
    ],
    cwd: JAIL_SCRATCH_PATH,
    stdin: JSON.stringify(request),
    ...(signal === undefined ? {} : { signal }),
  })
  const reader = new EnvelopeReader(marker, {
    maxOutputBytes: call.maxOutputBytes,
    maxEnvelopeBytes,
  })
  reader.push(ran.stdout)
  const end = {
    output: reader.finish(),
    stderr: ran.stderr,
    exitCode: ran.exitCode,
    signal: ran.signal,
    stoppedFor: ran.timedOut ? 'timeout' : ran.cancelled ? 'cancellation' : undefined,
    spawnError: ran.spawnError,
    timeoutMs: call.timeoutMs,
    maxEnvelopeBytes,
  } as const
  return childReport(end, changedFiles(before, await snapshotFolder(call.workdir)))
}

/**
 * Fails clearly when the jail's user may not enter a package root it is shown: the jail can
 * mount a folder it cannot reach, not open one that is closed to it (a checkout made with umask
 * 077, or that is itself a `mktemp -d` folder); its imports would fail with a bare
 * "Cannot find module".
 *
 * @throws EitriError `jail_unavailable` naming the folder and the fix; nothing ran.
 */
async function assertEnterable(
  roots: readonly string[],
  identity: { readonly uid: number; readonly gid: number },
): Promise<void> {
  for (const root of roots) {
    const stat = await fs.stat(root)
    const bit = stat.uid === identity.uid ? 0o100 : stat.gid === identity.gid ? 0o010 : 0o001
    if ((stat.mode & bit) !== 0) continue
    throw new EitriError(
      'jail_unavailable',
      `The jail runs confined functions as uid ${identity.uid}, which may not enter ${root} (mode ${(stat.mode & 0o777).toString(8)}), the package folder they load from; nothing ran. To fix: let others enter and read that folder (chmod o+rX on it and its files; the folders above it may stay closed), or put it in a folder that is, e.g. a clone made with umask 022.`,
    )
  }
}

/** Gives a folder and everything in it to `uid`, never following a symbolic link. */
async function chownTree(folder: string, uid: number, gid: number): Promise<void> {
  await fs.lchown(folder, uid, gid)
  for (const entry of await fs.readdir(folder, { withFileTypes: true, recursive: true })) {
    await fs.lchown(path.join(entry.parentPath, entry.name), uid, gid)
  }
}

/**
 * eitri's package root (for the runner) and the module's, without one that lies inside the
 * other.
 *
 * @throws EitriError `invalid_definition` when a root is `/`: the jail would see the host.
 */
function packageRoots(modulePath: string): string[] {
  const candidates = [packageRootOf(RUNNER_PATH), packageRootOf(modulePath)].sort(
    (a, b) => a.length - b.length,
  )
  const roots: string[] = []
  for (const candidate of candidates) {
    if (candidate === '/') {
      throw new EitriError(
        'invalid_definition',
        `The module ${modulePath} has no package root below /, so the jail cannot show it alone: put it in a folder with a package.json.`,
      )
    }
    if (!isWithinAny(candidate, roots)) {
      roots.push(candidate)
    }
  }
  return roots
}
