/**
 * @module jail/availability-probe
 * Whether jails run here at all: one real bubblewrap running `/bin/true` as the jail's user,
 * with the mounts the caller must make for it, before any command is trusted to a jail. A
 * failure is explained (what is missing, how to fix it) and nothing runs unconfined.
 */
import { buildBwrapArgs } from '../bubblewrap/bwrap-args.ts'
import type { CallerMounts } from '../bubblewrap/caller-mounts.ts'
import { jailEnvironment } from '../bubblewrap/jail-environment.ts'
import type { HostIdentity } from '../bubblewrap/jail-identity.ts'
import { explainProbeFailure, type JailAvailability } from '../bubblewrap/jail-probe.ts'
import { DEFAULT_JAIL_LIMITS, type JailSpec } from '../bubblewrap/jail-spec.ts'
import { EitriError } from '../errors/eitri-error.ts'
import { JailedProcess } from './jailed-process.ts'

/** Bubblewrap programs and users for which a probe succeeded in this process. */
const PROBED = new Set<string>()

/** The probe under way for each bubblewrap program and user, for jails that ask meanwhile. */
const PROBING = new Map<string, Promise<JailAvailability>>()

let probesStarted = 0

/** How many probe bubblewraps this process started (for tests that count them). */
export function jailProbesStarted(): number {
  return probesStarted
}

/** Probes one jail's setup: its bubblewrap, its user, the mounts its caller makes. */
export async function probeJail(options: {
  readonly bwrap: string
  readonly identity: HostIdentity
  readonly callerMounts: CallerMounts
  /** An empty, read-only folder to stand for the workspace. */
  readonly emptyFolder: string
}): Promise<JailAvailability> {
  const spec: JailSpec = {
    command: ['/bin/true'],
    workspace: options.emptyFolder,
    workspaceAccess: 'read-only',
    overlays: [],
    hiddenFolders: [],
    binds: [],
    environment: jailEnvironment(),
    limits: DEFAULT_JAIL_LIMITS,
  }
  let reachable: ReturnType<CallerMounts['plan']>
  try {
    reachable = options.callerMounts.plan(spec)
  } catch (error) {
    if (!(error instanceof EitriError)) throw error
    return { available: false, ...options.callerMounts.unavailable() }
  }
  // Bubblewrap ran here for this user already (another line's jail): the machine does not
  // change its mind within one process. A probe under way for another jail is waited for, not
  // run again beside it (isolated sessions' forks, each with a jail of its own, probe at once
  // when their clients list the tools together). A failure is never remembered nor taken from
  // another jail (whose setup may be what failed); this jail probes again with its own.
  const key = `${options.bwrap}\0${options.identity.uid}\0${options.identity.gid}`
  if (PROBED.has(key)) return { available: true }
  const running = PROBING.get(key)
  if (running !== undefined && (await running).available) return { available: true }
  if (PROBED.has(key)) return { available: true }
  const own = runProbe(options, reachable)
  PROBING.set(key, own)
  try {
    const answer = await own
    if (answer.available) PROBED.add(key)
    return answer
  } finally {
    if (PROBING.get(key) === own) PROBING.delete(key)
  }
}

/** One probe bubblewrap running `/bin/true` as the jail's user. */
async function runProbe(
  options: { readonly bwrap: string; readonly identity: HostIdentity },
  reachable: ReturnType<CallerMounts['plan']>,
): Promise<JailAvailability> {
  probesStarted += 1
  const probe = new JailedProcess({
    bwrap: options.bwrap,
    args: buildBwrapArgs(reachable.spec),
    identity: options.identity,
    callerMounts: reachable.mounts,
    maxOutputChars: 4000,
    timeoutMs: 10_000,
  })
  const exit = await probe.exited
  if (exit.exitCode === 0) return { available: true }
  return explainProbeFailure({
    spawnError: exit.spawnError,
    exitCode: exit.exitCode,
    stderr: probe.stderr.text(),
  })
}
