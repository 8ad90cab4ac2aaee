/**
 * @module jail/jail
 * The bubblewrap jail for one workspace: runs programs confined, in the foreground with a
 * deadline or in the background until killed, and fails closed: when the jail cannot start,
 * nothing runs.
 */
import fs from 'node:fs'
import os from 'node:os'
import { EitriError } from '../errors/eitri-error.ts'
import { DEFAULT_MAX_OUTPUT_CHARS } from '../util/bounded-output.ts'
import { buildBwrapArgs } from '../bubblewrap/bwrap-args.ts'
import { CallerMounts } from '../bubblewrap/caller-mounts.ts'
import { closeInheritedDescriptors } from './fd-hygiene.ts'
import { jailEnvironment } from '../bubblewrap/jail-environment.ts'
import { jailIdentity, type HostIdentity } from '../bubblewrap/jail-identity.ts'
import type { JailAvailability } from '../bubblewrap/jail-probe.ts'
import {
  DEFAULT_JAIL_LIMITS,
  JAIL_WORKSPACE,
  type JailLimits,
  type JailSpec,
} from '../bubblewrap/jail-spec.ts'
import { JailedProcess } from './jailed-process.ts'
import { PrestartedLaunchers, type LauncherShape } from './prestarted-launcher.ts'
import type { PrestartedJail } from './prestarted-jail.ts'
import { reaperPerl, underReaper } from './jail-reaper.ts'
import { noKeysProgram } from './no-keys-filter.ts'
import { SECCOMP_FD } from '../bubblewrap/hidden-args.ts'
import { aheadKey } from './prestarted-jails.ts'
import { PrestartedJailJobs } from './prestarted-jail-jobs.ts'
import { MemoryCgroups, type MemoryAccount, type MemorySupport } from './memory-cgroup.ts'
import { WaiterJob } from './waiter-job.ts'
import { memoryReport } from './memory-report.ts'
import {
  makePlaceholders,
  planProtectedMounts,
  removeMountPoints,
  type Placeholders,
} from './protected-mounts.ts'
import {
  DEFAULT_JAIL_TIMEOUT_MS,
  type JailJob,
  type JailRequest,
  type JailResult,
} from './jail-request.ts'
import { WarmJailPool, type ProcessStarter } from './warm-jail-pool.ts'
import { probeJail } from './availability-probe.ts'
import { JailWorkspaces, type WorkspaceLayer } from './jail-workspaces.ts'
import type { JailOptions } from './jail-options.ts'

export {
  DEFAULT_JAIL_TIMEOUT_MS,
  type JailJob,
  type JailRequest,
  type JailResult,
} from './jail-request.ts'
export { WARM_IDLE_MS } from './warm-jail-pool.ts'
export type { JailOptions } from './jail-options.ts'

/** Runs programs in bubblewrap for one workspace. */
export class Jail implements AsyncDisposable {
  readonly identity: HostIdentity
  readonly #options: JailOptions
  readonly #bwrap: string
  /** What a root caller mounts for `nobody` because it cannot reach it (a 0700 checkout). */
  readonly #callerMounts: CallerMounts
  #availability: Promise<JailAvailability> | undefined
  #support: { root: string; placeholders: Placeholders } | undefined
  /** How programs see the workspace: overlays or a mirror. */
  readonly #workspaces: JailWorkspaces
  #activeRuns = 0
  #pendingMountPoints = new Set<string>()
  readonly #jobs = new Set<JailedProcess>()
  #reaper: Promise<string | undefined> | undefined
  readonly #warm: WarmJailPool
  readonly #memory: MemoryCgroups
  /** The launcher of the next cold start, started ahead of it. */
  readonly #launchers: PrestartedLaunchers
  /** The next cold starts' whole jails, started ahead of them (on overlays). */
  readonly #ahead: PrestartedJailJobs
  #closed = false

  constructor(options: JailOptions) {
    this.#options = options
    this.#bwrap = options.bwrap ?? 'bwrap'
    this.#memory = new MemoryCgroups({ enabled: options.memoryCgroups !== false })
    this.#launchers = new PrestartedLaunchers(this.#memory)
    this.identity = jailIdentity()
    this.#workspaces = new JailWorkspaces(options, this.identity, () => this.#pendingMountPoints)
    const workspaces = this.#workspaces
    const isClosed = (): boolean => this.#closed
    this.#callerMounts = new CallerMounts(this.identity, [
      options.temporaryRoot ?? os.tmpdir(),
      os.tmpdir(),
      '/tmp',
      '/dev/shm',
    ])
    this.#ahead = new PrestartedJailJobs(
      {
        workspaces,
        memory: this.#memory,
        callerMounts: this.#callerMounts,
        bwrap: this.#bwrap,
        mounts: options.mounts ?? [],
        closed: isClosed,
        reaperPerl: () => this.#reaperPerl(),
        limits: (request) => this.#limits(request),
      },
      options.aheadIdleMs === undefined ? {} : { idleMs: options.aheadIdleMs },
    )
    this.#warm = new WarmJailPool(
      {
        workspaces,
        get closed() {
          return isClosed()
        },
        admit: (request) => this.#admit(request),
        processStarter: (command, request, writable, workspace) =>
          this.#processStarter(command, request, writable, workspace),
        limits: () => this.#limits({}),
      },
      options,
    )
  }

  /**
   * How programs see the workspace; see {@link JailWorkspaces.layers}.
   * @internal
   */
  get layers(): JailWorkspaces['layers'] {
    return this.#workspaces.layers
  }

  /**
   * Whether jails run here; probed once with a real jailed command. The layer host starts
   * beside the probe rather than after it: the first command needs both.
   */
  availability(): Promise<JailAvailability> {
    if (this.#availability === undefined && !this.#closed) {
      // A failure is met where the overlays are used: the first start.
      this.#workspaces.overlay().catch(() => undefined)
    }
    this.#availability ??= this.#probe()
    return this.#availability
  }

  /**
   * Runs a program to completion (or its deadline).
   *
   * @throws EitriError `jail_unavailable` with the reason and the fix; nothing ran.
   */
  async run(request: JailRequest): Promise<JailResult> {
    const warm = await this.#warm.run(request)
    if (warm !== undefined) return warm
    // Cold: one bubblewrap of its own. A plain command also starts the warm jail beside it,
    // once its own bubblewrap is under way, so the next ones need no start of their own.
    const { job, workspace } = await this.#launch(
      request,
      request.timeoutMs ?? DEFAULT_JAIL_TIMEOUT_MS,
      // A plain command's next ones go to the warm jail; any other runs cold every time.
      !this.#warm.accepts(request),
    )
    this.#warm.startBeside(request, workspace)
    return job.finished
  }

  /**
   * Starts the warm jail of an access level ahead of any command (with the probe and the
   * layer host before it), and resolves once it is ready, or could not start (then commands
   * run cold, one bubblewrap each, still confined). Without it the first plain command starts
   * it, and runs cold meanwhile.
   *
   * @throws EitriError `jail_unavailable` with the reason and the fix.
   */
  async startWarmJail(access: JailRequest['access'] = 'workspace-write'): Promise<void> {
    await this.#admit({ access })
    await this.#warm.start(access)
  }

  /**
   * Starts a program in the background; it runs until it ends, is killed, or the jail closes.
   * `oneShot`: no other start is expected from this jail (`eitri exec`), so no launcher is
   * started ahead for the next one (a process and a spawn on this thread that nothing would use).
   */
  async start(
    request: Omit<JailRequest, 'timeoutMs'>,
    options: { readonly oneShot?: boolean } = {},
  ): Promise<JailJob> {
    return (await this.#launch(request, undefined, options.oneShot !== true)).job
  }

  /**
   * How programs' memory is bounded here: by a memory cgroup, or (where none can be made) by
   * RLIMIT_DATA, with the reason.
   */
  memorySupport(): MemorySupport {
    return this.#memory.support()
  }

  /** Kills every job and removes the jail's temporary folders. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#warm.close()
    this.#launchers.close()
    this.#ahead.close()
    for (const job of this.#jobs) job.kill()
    await Promise.allSettled([...this.#jobs].map((job) => job.exited))
    await this.#workspaces.close()
    removeMountPoints([...this.#pendingMountPoints])
    if (this.#support !== undefined) fs.rmSync(this.#support.root, { recursive: true, force: true })
    this.#callerMounts.close()
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  /** `prestart`: cold starts like this one are expected again, so the next one's launcher starts ahead. */
  async #launch(
    request: JailRequest,
    timeoutMs: number | undefined,
    prestart: boolean,
  ): Promise<{ job: JailJob; workspace: WorkspaceLayer }> {
    const writable = await this.#admit(request)
    const key = aheadKey(writable, this.#limits(request), request.binds ?? [])
    // A job of a jail started ahead reads /dev/null: input to give goes the old way.
    const ahead =
      request.stdin === undefined || request.stdin === ''
        ? this.#ahead.take(key, request.sharer)
        : undefined
    const workspace =
      ahead === undefined
        ? await this.#workspaces.prepareCold(writable)
        : await this.#ahead.mount(ahead, writable)
    // Another jail still waits: the refill starts once this job has answered, not beside it
    // (its fork from this thread, Perl and bubblewrap's mounts would compete with the job).
    const answered =
      ahead !== undefined && this.#ahead.waiting > 0 ? Promise.withResolvers<void>() : undefined
    const start = await this.#processStarter(request.command, request, writable, workspace, {
      prestart,
      key,
      ...(ahead === undefined ? {} : { ahead }),
      ...(answered === undefined ? {} : { refillAfter: answered.promise }),
    })
    const process = start({
      maxOutputChars: request.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
      timeoutMs,
      signal: request.signal,
      stdin: request.stdin,
      onOutput: request.onOutput,
    })
    this.#jobs.add(process)
    const finished = process.exited.then(async (exit): Promise<JailResult> => {
      this.#jobs.delete(process)
      const sync = await this.#ahead.finish(workspace, writable, ahead, start.ranAhead === true)
      const stdout = process.stdout.text()
      const stderr = process.stderr.text()
      return {
        ...exit,
        stdout,
        stderr,
        truncated: process.stdout.droppedChars + process.stderr.droppedChars > 0,
        ...(sync === undefined ? {} : { sync }),
        memory: memoryReport({
          limitBytes: this.#limits(request).memoryBytes,
          inCgroup: process.inMemoryCgroup,
          oomKills: exit.oomKills ?? 0,
          exitCode: exit.exitCode,
          stdout,
          stderr,
        }),
      }
    })
    if (answered !== undefined) {
      const resolve = (): void => answered.resolve()
      void finished.then(resolve, resolve)
    }
    return { job: { process, finished }, workspace }
  }

  /** Checks the jail can run; answers whether the workspace is writable for this request. */
  async #admit(request: Pick<JailRequest, 'access'>): Promise<boolean> {
    if (this.#closed) throw new EitriError('jail_unavailable', 'The jail is closed; nothing ran.')
    const availability = await this.availability()
    if (!availability.available) {
      throw new EitriError(
        'jail_unavailable',
        `The jail is unavailable, so nothing ran: ${availability.reason}. To fix: ${availability.fix}.`,
      )
    }
    return request.access === 'workspace-write'
  }

  /**
   * What starts bubblewrap on `command` with the workspace mounts for this access: for a
   * mirror, the protected paths' read-only mounts over it; for an overlay, none (the way back
   * judges every path), and bubblewrap starts in the layer host's namespace.
   */
  async #processStarter(
    command: readonly string[],
    request: Pick<JailRequest, 'binds' | 'environment' | 'limits' | 'cwd'> & {
      /** The command reaps as PID 1 (a warm jail's): see JailSpec. */
      readonly asPidOne?: boolean
    },
    writable: boolean,
    workspace: WorkspaceLayer,
    cold?: {
      readonly prestart: boolean
      readonly key: string
      readonly ahead?: PrestartedJail
      /** When the next start's jail may start ahead; at once without it. */
      readonly refillAfter?: Promise<void>
    },
  ): Promise<ProcessStarter & { ranAhead?: boolean }> {
    const mirrored = workspace.type === 'mirror'
    const root =
      workspace.type === 'mirror'
        ? workspace.mirror.root
        : workspace.type === 'point'
          ? workspace.mountPoint
          : workspace.layer.mountPoint
    const plan = mirrored
      ? planProtectedMounts({
          root,
          placeholders: this.#ensureSupport().placeholders,
          extraPatterns: this.#options.protectedPaths ?? [],
          // A mirror never holds private paths: they are not copied in, and refused on the way out.
          privatePaths: [],
          protect: writable,
        })
      : { overlays: [], hiddenFolders: [], createdMountPoints: [] }
    for (const mountPoint of plan.createdMountPoints) this.#pendingMountPoints.add(mountPoint)
    const limits = this.#limits(request)
    const overlay = mirrored ? undefined : this.#workspaces.openOverlay
    // A cold start's launcher joins the cgroup, enters the layer host and drops to the jail's
    // user; one started ahead does that before the command is known.
    const shape: LauncherShape | undefined =
      cold === undefined
        ? undefined
        : {
            namespaces: overlay?.namespaces() ?? [],
            ...(this.identity.dropped
              ? { drop: { uid: this.identity.uid, gid: this.identity.gid } }
              : {}),
            memoryBytes: limits.memoryBytes,
          }
    const ahead = cold?.ahead
    // A cold start's PID 1 is the reaper (jail-reaper.ts): bubblewrap's own is dumpable.
    const perl = cold === undefined ? undefined : await this.#reaperPerl()
    // Without the reaper, bubblewrap installs the filter the reaper would have (decision 0044),
    // from a descriptor that only the chain passes, not a launcher started ahead.
    const seccomp = cold !== undefined && perl === undefined ? noKeysSeccomp() : undefined
    const prestarted =
      ahead !== undefined || shape === undefined || seccomp !== undefined
        ? undefined
        : this.#launchers.take(shape)
    const memoryCgroup: MemoryAccount | undefined =
      ahead !== undefined
        ? ahead.memoryCgroup
        : prestarted === undefined
          ? this.#memory.create(limits.memoryBytes)
          : prestarted.memoryCgroup
    const runAs = overlay?.runAs()
    const spec: JailSpec = {
      command,
      workspace: root,
      workspaceAccess: writable ? 'read-write' : 'read-only',
      overlays: plan.overlays,
      hiddenFolders: plan.hiddenFolders,
      binds: [...(this.#options.mounts ?? []), ...(request.binds ?? [])],
      environment: jailEnvironment(request.environment),
      limits,
      ...(memoryCgroup === undefined ? {} : { memoryInCgroup: true }),
      ...(request.cwd === undefined ? {} : { cwd: request.cwd }),
      ...(runAs === undefined ? {} : { runAs }),
      ...(request.asPidOne === true ? { asPidOne: true } : {}),
      ...(seccomp === undefined ? {} : { seccompFd: SECCOMP_FD }),
    }
    const reachable = this.#callerMounts.plan(perl === undefined ? spec : underReaper(spec, perl))
    let enter: string[] | undefined
    try {
      if (overlay !== undefined) await overlay.callerMounts(reachable.mounts)
      enter = overlay?.enter()
    } catch (error) {
      prestarted?.discard()
      ahead?.discard()
      throw error
    }
    // Without a layer host, caller mounts need a mount step of their own: no launcher then.
    const launcher = enter === undefined && reachable.mounts.length > 0 ? undefined : shape
    if (launcher === undefined) prestarted?.discard({ keepCgroup: true })
    // The jail started ahead runs the command itself (else the usual chain, in its cgroup).
    const started =
      ahead !== undefined && ahead.command(spec.cwd ?? JAIL_WORKSPACE, spec.environment, command)
        ? ahead
        : undefined
    if (ahead !== undefined && started === undefined) ahead.discard({ keepCgroup: true })
    const starter: ProcessStarter & { ranAhead?: boolean } = (processOptions) => {
      this.#activeRuns++
      const process = new JailedProcess({
        ...processOptions,
        bwrap: this.#bwrap,
        args: buildBwrapArgs(reachable.spec),
        identity: this.identity,
        ...(enter === undefined ? { callerMounts: reachable.mounts } : { enter }),
        memoryCgroup: started === undefined ? memoryCgroup : started.jobMemory(),
        ...(started !== undefined
          ? { prestarted: started }
          : launcher === undefined || prestarted === undefined
            ? {}
            : { prestarted }),
        // A jail started ahead runs it under its waiter, which installs the filter itself.
        ...(started === undefined && seccomp !== undefined ? { seccompProgram: seccomp } : {}),
      })
      if (launcher !== undefined && cold?.prestart === true) {
        // Off this start's path: the next one's start overlaps the program's. On overlays the
        // whole jail starts ahead; on a mirror (whose protected mounts depend on what it holds
        // at the start) only the launcher.
        const key = cold.key
        const refill = (): void => {
          if (this.#closed) return
          // No launcher ahead where the start passes a seccomp program (see above).
          if (overlay === undefined)
            return seccomp === undefined ? this.#launchers.prepare(launcher) : undefined
          void this.#ahead.prepare(key, request, writable, launcher)
        }
        if (cold.refillAfter === undefined) setImmediate(refill)
        else void cold.refillAfter.then(() => setImmediate(refill))
      }
      void process.exited.then(() => {
        if (--this.#activeRuns > 0) return
        removeMountPoints([...this.#pendingMountPoints])
        this.#pendingMountPoints.clear()
      })
      starter.ranAhead = started !== undefined && started.child instanceof WaiterJob
      return process
    }
    return starter
  }

  /**
   * The execute-only Perl that runs a cold jail's PID 1 (jail-reaper.ts), made once; undefined
   * where it cannot be made (a `noexec` temporary folder): bubblewrap's own PID 1 then, as in
   * decision 0036's known limit, which installs the no-keys filter itself (decision 0044).
   */
  #reaperPerl(): Promise<string | undefined> {
    this.#reaper ??= reaperPerl().catch(() => undefined)
    return this.#reaper
  }

  /** A request's limits: its own, else the jail's, else the defaults. */
  #limits(request: Pick<JailRequest, 'limits'>): JailLimits {
    return { ...DEFAULT_JAIL_LIMITS, ...this.#options.limits, ...request.limits }
  }

  async #probe(): Promise<JailAvailability> {
    closeInheritedDescriptors()
    // Beside the jail's probe: the first start needs both answers, and neither blocks the other.
    const memory = this.#memory.prepare()
    const support = this.#ensureSupport()
    const answer = await probeJail({
      bwrap: this.#bwrap,
      identity: this.identity,
      callerMounts: this.#callerMounts,
      emptyFolder: support.placeholders.emptyFolder,
    })
    await memory
    return answer
  }

  #ensureSupport(): { root: string; placeholders: Placeholders } {
    this.#support ??= makePlaceholders(this.#options.temporaryRoot)
    return this.#support
  }
}

/**
 * The no-keys filter for bubblewrap to install.
 *
 * @throws EitriError `jail_unavailable` on a machine the filter does not know; nothing ran.
 */
function noKeysSeccomp(): Buffer {
  const program = noKeysProgram()
  if (program === undefined)
    throw new EitriError(
      'jail_unavailable',
      `The jail cannot refuse kernel keys on this machine (${process.arch}), so nothing ran. To fix: run eitri on x86_64 or aarch64.`,
    )
  return program
}
