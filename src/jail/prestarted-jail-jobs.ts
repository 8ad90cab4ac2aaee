/**
 * @module jail/prestarted-jail-jobs
 * The jobs of one Jail that run in jails started ahead (prestarted-jail.ts): what starts such a
 * jail (the argv a cold start with the same access, limits and binds gets, with the job waiter
 * as PID 1), the fresh overlay a job mounts on its point, the overlay mounted ahead while the
 * jail waits, and, after the job, its overlay read back and the jail given back or ended. The
 * jails themselves wait in {@link PrestartedJails}.
 */
import { buildBwrapArgs, limitWords } from '../bubblewrap/bwrap-args.ts'
import type { CallerMounts } from '../bubblewrap/caller-mounts.ts'
import type { JailBind, JailLimits, JailSpec } from '../bubblewrap/jail-spec.ts'
import { REAPER_PERL_MOUNT, reaperBind } from './jail-reaper.ts'
import type { JailRequest } from './jail-request.ts'
import type { JailWorkspaces, WorkspaceLayer } from './jail-workspaces.ts'
import { JOB_WAITER_SCRIPT } from './job-waiter-script.ts'
import type { MemoryCgroups } from './memory-cgroup.ts'
import type { OverlayWorkspace } from './overlay/overlay-workspace.ts'
import { JAIL_PERL, PrestartedJail } from './prestarted-jail.ts'
import { PrestartedJails } from './prestarted-jails.ts'
import { PrestartedLauncher, type LauncherShape } from './prestarted-launcher.ts'
import type { SyncReport } from './workspace-mirror.ts'

/** What of its Jail the jobs in jails started ahead use. */
export interface PrestartedJailHost {
  readonly workspaces: JailWorkspaces
  readonly memory: MemoryCgroups
  readonly callerMounts: CallerMounts
  /** The bubblewrap program. */
  readonly bwrap: string
  /** Binds every program gets. */
  readonly mounts: readonly JailBind[]
  /** True once the Jail closed: nothing is started or given back after. */
  closed(): boolean
  /** The execute-only Perl of PID 1; undefined where none can be made. */
  reaperPerl(): Promise<string | undefined>
  /** A request's limits. */
  limits(request: Pick<JailRequest, 'limits'>): JailLimits
}

/** The jobs of one Jail in jails started ahead; see the module comment. */
export class PrestartedJailJobs {
  readonly #host: PrestartedJailHost
  readonly #jails: PrestartedJails

  constructor(host: PrestartedJailHost, options: { readonly idleMs?: number } = {}) {
    this.#host = host
    this.#jails = new PrestartedJails((point) => this.#releasePoint(point), options)
  }

  /** How many jails wait now (started or starting). */
  get waiting(): number {
    return this.#jails.waiting
  }

  /** A waiting jail for `key` and `sharer`; see {@link PrestartedJails.take}. */
  take(key: string, sharer?: string): PrestartedJail | undefined {
    return this.#jails.take(key, sharer)
  }

  /**
   * Keeps jails for `key` started ahead: the spec a start with `request`'s access, limits and
   * binds gets, through a launcher of `shape`.
   */
  prepare(
    key: string,
    request: Pick<JailRequest, 'binds' | 'limits'>,
    writable: boolean,
    shape: LauncherShape,
  ): Promise<void> {
    return this.#jails.prepare(key, () => this.#start(key, request, writable, shape))
  }

  /** Ends the waiting jails; none is started after. */
  close(): void {
    this.#jails.close()
  }

  /**
   * The fresh overlay of a start that takes `ahead`, on that jail's point. The jail is ended
   * if it cannot be mounted.
   */
  async mount(ahead: PrestartedJail, writable: boolean): Promise<WorkspaceLayer> {
    const workspaces = this.#host.workspaces
    const overlay = workspaces.openOverlay
    try {
      if (overlay === undefined) throw new Error('the overlays are closed')
      const layer = await workspaces.mount(overlay, ahead.point, writable)
      return {
        type: 'overlay',
        layer,
        release: () => overlay.releaseSharedPoint(ahead.point),
      }
    } catch (error) {
      ahead.discard()
      this.#releasePoint(ahead.point)
      throw error
    }
  }

  /**
   * Brings back what a start changed and ends its overlay. A job that ran in a jail started
   * ahead leaves the jail running: its point is kept (and the next job's overlay mounted on it
   * ahead), and the jail is given back once its waiter says it is ready again and the job was
   * read back; else it is ended and its point let go of.
   */
  async finish(
    workspace: WorkspaceLayer,
    writable: boolean,
    ahead: PrestartedJail | undefined,
    ranAhead: boolean,
  ): Promise<SyncReport | undefined> {
    const workspaces = this.#host.workspaces
    if (ahead === undefined || !ranAhead || ahead.ended || workspace.type !== 'overlay') {
      if (ahead !== undefined) this.#jails.lost(ahead)
      return workspaces.finish(workspace, writable)
    }
    const { release: _kept, ...layer } = workspace
    const sync = workspaces.finish(layer, writable, { writable })
    void Promise.allSettled([sync, ahead.reusable()]).then(([readBack, reusable]) => {
      // Fail closed: a read-back that failed may have left the job's overlay on the point, or
      // its upper layer half brought back; the jail takes no other job.
      if (
        readBack.status === 'fulfilled' &&
        reusable.status === 'fulfilled' &&
        reusable.value &&
        !this.#host.closed()
      ) {
        this.#jails.giveBack(ahead)
      } else {
        this.#jails.lost(ahead)
        ahead.discard()
        this.#releasePoint(ahead.point)
      }
    })
    return sync
  }

  /** Gives back a jail started ahead's point that no command used, and its overlay mounted ahead. */
  #releasePoint(point: string): void {
    const workspaces = this.#host.workspaces
    const overlay = workspaces.openOverlay
    if (overlay === undefined) return
    void workspaces.discardPrepared(overlay, point).then(() => overlay.releaseSharedPoint(point))
  }

  /**
   * Mounts the command's fresh overlay on a jail started ahead once its waiter is ready, as
   * for a warm jail's next command (decision 0019): the start that takes the jail takes the
   * overlay if what it was made from still holds, else mounts its own. Nothing runs in that
   * jail but the waiter, which never looks at the workspace.
   */
  #mountBeforeTaken(made: PrestartedJail, overlay: OverlayWorkspace, writable: boolean): void {
    const unused = (): boolean => made.ready && !made.taken && !this.#host.closed()
    void made.started.then(() => {
      if (made.signalled && unused())
        void this.#host.workspaces.prepare(overlay, made.point, writable, unused)
    })
  }

  /**
   * Starts the next cold start's jail ahead (see prestarted-jail.ts): the spec a start with
   * `request`'s access, limits and binds gets, on a shared point of its own, running the waiter.
   */
  async #start(
    key: string,
    request: Pick<JailRequest, 'binds' | 'limits'>,
    writable: boolean,
    shape: LauncherShape,
  ): Promise<PrestartedJail> {
    const host = this.#host
    const overlay = host.workspaces.openOverlay
    if (overlay === undefined) throw new Error('no overlays')
    // The waiter runs an execute-only copy of Perl, so no job can trace it and it may take the
    // next job; without one it runs one job and ends (decision 0042).
    const perl = await host.reaperPerl()
    const point = await overlay.jobSharedPoint()
    try {
      const limits = host.limits(request)
      const memoryCgroup = host.memory.create(limits.memoryBytes)
      const runAs = overlay.runAs()
      const base: JailSpec = {
        command: [],
        workspace: point,
        workspaceAccess: writable ? 'read-write' : 'read-only',
        overlays: [],
        hiddenFolders: [],
        binds: [
          ...host.mounts,
          ...(request.binds ?? []),
          ...(perl === undefined ? [] : [reaperBind(perl)]),
        ],
        environment: {},
        limits,
        ...(memoryCgroup === undefined ? {} : { memoryInCgroup: true }),
        cwd: '/',
        ...(runAs === undefined ? {} : { runAs }),
        asPidOne: true,
      }
      // The waiter sets the limits itself: no prlimit before it.
      const program = perl === undefined ? JAIL_PERL : REAPER_PERL_MOUNT
      const spec = {
        ...base,
        command: [program, '-e', JOB_WAITER_SCRIPT, '--', ...limitWords(base)],
      }
      const reachable = host.callerMounts.plan(spec)
      await overlay.callerMounts(reachable.mounts)
      if (host.closed()) throw new Error('the jail closed')
      const made = new PrestartedJail(
        new PrestartedLauncher(shape, memoryCgroup, { readiness: true }),
        key,
        point,
        host.bwrap,
        buildBwrapArgs(reachable.spec, { limitsBy: 'command' }),
      )
      this.#mountBeforeTaken(made, overlay, writable)
      return made
    } catch (error) {
      overlay.releaseSharedPoint(point)
      throw error
    }
  }
}
