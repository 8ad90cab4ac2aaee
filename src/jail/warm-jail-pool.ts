/**
 * @module jail/warm-jail-pool
 * A jail's warm jails, one per sharer and access level: started beside the first plain command
 * (or ahead of any, on request), reused by the plain foreground commands after it, closed after
 * {@link WARM_IDLE_MS} of rest, and replaced by the next command once closed or dead. When one
 * cannot start, every command runs cold, one bubblewrap each, still confined.
 *
 * A warm jail's /tmp, its SysV IPC objects and the processes started ahead of the next
 * command outlive each command, so a warm jail serves one sharer (one session's programs,
 * `JailRequest.sharer`) only: another session's command on the same line never runs where this
 * one's left files or segments behind. (The commands' HOME is read-only: decision 0064.)
 */
import type { JailBind, JailLimits } from '../bubblewrap/jail-spec.ts'
import { JAIL_WORKSPACE } from '../bubblewrap/jail-spec.ts'
import { DEFAULT_MAX_OUTPUT_CHARS } from '../util/bounded-output.ts'
import { DEFAULT_JAIL_TIMEOUT_MS, type JailRequest, type JailResult } from './jail-request.ts'
import type { JailWorkspaces, WorkspaceLayer } from './jail-workspaces.ts'
import type { JailedProcess } from './jailed-process.ts'
import { memoryReport } from './memory-report.ts'
import { executeOnlyCopy } from './execute-only-copy.ts'
import { reaped, reaperBind, reaperPerl } from './jail-reaper.ts'
import {
  NODE_MOUNT,
  OUTPUT_WINDOW_FILE,
  OUTPUT_WINDOW_MOUNT,
  SUPERVISOR_FILE,
  SUPERVISOR_MOUNT,
  WarmJail,
} from './warm-jail.ts'

/** A warm jail that ran nothing for this long is closed (and its placeholders removed). */
export const WARM_IDLE_MS = 15_000

/** What starts one bubblewrap process, given what it prints to and how long it may run. */
export type ProcessStarter = (
  processOptions: Omit<
    ConstructorParameters<typeof JailedProcess>[0],
    'bwrap' | 'args' | 'identity'
  >,
) => JailedProcess

/** What the pool needs of its jail. */
export interface WarmJailHost {
  /** How programs see the workspace. */
  readonly workspaces: JailWorkspaces
  /** True once the jail closed: a warm jail starting then ends itself. */
  readonly closed: boolean
  /** Checks the jail can run; answers whether the workspace is writable for this request. */
  admit(request: Pick<JailRequest, 'access'>): Promise<boolean>
  /** What starts bubblewrap on `command` over `workspace` (see the jail). */
  processStarter(
    command: readonly string[],
    request: Pick<JailRequest, 'binds'> & { readonly asPidOne?: boolean },
    writable: boolean,
    workspace: WorkspaceLayer,
  ): Promise<ProcessStarter>
  /** The jail's own limits (a warm command takes no limits of its own). */
  limits(): JailLimits
}

/** One access level's warm jail and the bubblewrap process it runs in. */
interface WarmEntry {
  readonly jail: WarmJail
  readonly process: JailedProcess
  idle: NodeJS.Timeout | undefined
  /** True once its supervisor answered ready. */
  ready: boolean
}

/** The warm jails of one jail; see the module comment. */
export class WarmJailPool {
  readonly #host: WarmJailHost
  /** True makes plain commands wait for the warm jail to start rather than run cold. */
  readonly #wait: boolean
  /** By {@link #key}: one per sharer and access level. */
  readonly #warm = new Map<string, WarmEntry>()
  /** Warm jails being started, by key: settled once ready, failed or given up. */
  readonly #warming = new Map<string, Promise<void>>()
  /** A short number for each sharer, which names its warm jails' mount points. */
  readonly #sharers = new Map<string, number>()
  #unavailable: string | undefined

  constructor(host: WarmJailHost, options: { readonly waitForWarmJail?: boolean | undefined }) {
    this.#host = host
    this.#wait = options.waitForWarmJail === true
  }

  /**
   * Runs a plain foreground command in the ready warm jail of its access level; undefined when
   * none can take it (not plain, none ready, or none can start), and it runs cold instead.
   */
  async run(request: JailRequest): Promise<JailResult | undefined> {
    if (!isPlain(request) || this.#unavailable !== undefined) return undefined
    if (this.#wait) {
      await this.#host.admit(request)
      await this.start(request.access, request.sharer)
    }
    const key = this.#key(request.access, request.sharer)
    const warm = this.#warm.get(key)
    if (warm?.ready !== true || !warm.jail.alive) return undefined
    return this.#runWarm(request, key, warm)
  }

  /** Whether a warm jail could take `request` (a plain command), once one is ready. */
  accepts(request: JailRequest): boolean {
    return isPlain(request) && this.#unavailable === undefined
  }

  /**
   * After a plain command started cold: starts its access level's warm jail beside it, so the
   * next ones need no start of their own. `workspace`: what the cold command sees (a mirror it
   * just filled is bound by the warm jail as it is).
   */
  startBeside(request: JailRequest, workspace: WorkspaceLayer): void {
    if (!isPlain(request) || this.#unavailable !== undefined) return
    void this.#warmUp(
      request.access,
      this.#key(request.access, request.sharer),
      workspace.type === 'mirror' ? workspace : undefined,
    )
  }

  /**
   * Starts the warm jail of an access level unless one runs or is starting, and resolves once
   * it is ready, or could not start (then commands run cold). The caller admitted the jail.
   */
  async start(access: JailRequest['access'], sharer?: string): Promise<void> {
    if (this.#unavailable === undefined)
      await this.#warmUp(access, this.#key(access, sharer), undefined)
  }

  /**
   * The warm jail's key, which also names its mount point: the access level alone for the
   * jail's own caller, else with the sharer's number.
   */
  #key(access: JailRequest['access'], sharer: string | undefined): string {
    if (sharer === undefined) return access
    let number = this.#sharers.get(sharer)
    if (number === undefined) this.#sharers.set(sharer, (number = this.#sharers.size + 1))
    return `${access}-${number}`
  }

  /** Ends every warm jail, and those still starting. */
  async close(): Promise<void> {
    // A warm jail still starting is ended too: its `ready` fails when its process is killed,
    // and one not spawned yet ends itself on seeing the host closed.
    for (const warm of this.#warm.values()) {
      if (warm.idle !== undefined) clearTimeout(warm.idle)
      await warm.jail.close()
    }
    await Promise.allSettled([...this.#warming.values()])
    this.#warm.clear()
  }

  /**
   * Starts the access level's warm jail unless one runs or is starting, and resolves once it
   * is ready or failed (then every command runs cold, still confined). `mirror`: the mirror a
   * cold command just filled, which the warm jail binds (none is synced for it here).
   */
  #warmUp(
    access: JailRequest['access'],
    key: string,
    mirror: Extract<WorkspaceLayer, { type: 'mirror' }> | undefined,
  ): Promise<void> {
    const known = this.#warm.get(key)
    if (known !== undefined && known.jail.alive) return known.jail.ready.catch(() => undefined)
    const starting = this.#warming.get(key)
    if (starting !== undefined) return starting
    const writable = access === 'workspace-write'
    const workspaces = this.#host.workspaces
    const started = (async () => {
      const overlay = await workspaces.overlay()
      const shown: WorkspaceLayer =
        overlay !== undefined
          ? { type: 'point', mountPoint: await overlay.sharedPoint(key) }
          : (mirror ?? { type: 'mirror', mirror: await workspaces.syncIn() })
      // The reaper (PID 1) and the supervisor (PID 2) run programs their commands may not
      // read, so neither is dumpable (execute-only-copy.ts); bubblewrap's own PID 1 would be.
      const [perl, node] = await Promise.all([reaperPerl(), executeOnlyCopy(process.execPath)])
      if (this.#host.closed) return
      const start = await this.#host.processStarter(
        reaped([NODE_MOUNT, SUPERVISOR_MOUNT]),
        { binds: runtimeBinds(perl, node), asPidOne: true },
        writable,
        shown,
      )
      // WarmJail starts its bubblewrap in its constructor, so the holder is filled below it.
      const spawned: { process?: JailedProcess } = {}
      const jail = new WarmJail(
        (onOutput) =>
          (spawned.process = start({ maxOutputChars: 64 * 1024, keepStdinOpen: true, onOutput })),
      )
      if (spawned.process === undefined) throw new Error('the warm jail started no process')
      const warm: WarmEntry = { jail, process: spawned.process, idle: undefined, ready: false }
      this.#warm.set(key, warm)
      // A close() meanwhile found no jail to end: this start ends its own (and close() waits).
      if (this.#host.closed) return await jail.close()
      await jail.ready
      warm.ready = true
      this.#idle(key, warm)
      // The first command's overlay, mounted while none waits for it.
      if (overlay !== undefined && shown.type === 'point')
        void workspaces.prepare(overlay, shown.mountPoint, writable)
    })()
      .catch((error: unknown) => {
        // Without a warm jail every command still runs confined, one jail each.
        this.#unavailable ??= error instanceof Error ? error.message : String(error)
        this.#warm.delete(key)
      })
      .finally(() => this.#warming.delete(key))
    this.#warming.set(key, started)
    return started
  }

  /** Closes a warm jail that ran nothing for {@link WARM_IDLE_MS}. */
  #idle(key: string, warm: WarmEntry): void {
    if (warm.idle !== undefined) clearTimeout(warm.idle)
    warm.idle = setTimeout(() => {
      if (this.#warm.get(key) === warm) this.#warm.delete(key)
      void warm.jail.close().then(() => this.#discardPrepared(key))
    }, WARM_IDLE_MS)
    warm.idle.unref()
  }

  /** Unmounts the overlay mounted ahead for a warm jail (by key), which ended. */
  async #discardPrepared(key: string): Promise<void> {
    const workspaces = this.#host.workspaces
    const overlay = workspaces.openOverlay
    if (overlay === undefined || this.#host.closed || this.#warm.has(key)) return
    await workspaces.discardPrepared(overlay, await overlay.sharedPoint(key))
  }

  /** Runs a plain foreground command in a ready warm jail. */
  async #runWarm(request: JailRequest, key: string, warm: WarmEntry): Promise<JailResult> {
    const workspaces = this.#host.workspaces
    const writable = await this.#host.admit(request)
    const overlay = await workspaces.overlay()
    const mirror = overlay === undefined ? await workspaces.syncIn() : undefined
    const shared =
      overlay === undefined ? undefined : { overlay, point: await overlay.sharedPoint(key) }
    if (warm.idle !== undefined) clearTimeout(warm.idle)
    const warmProcess = warm.process
    const killsBefore = warmProcess.oomKills()
    const layer =
      shared === undefined
        ? undefined
        : {
            overlay: shared.overlay,
            layer: await workspaces.mount(shared.overlay, shared.point, writable),
          }
    let outcome: Awaited<ReturnType<WarmJail['run']>>
    try {
      outcome = await warm.jail.run({
        argv: request.command,
        cwd: request.cwd ?? JAIL_WORKSPACE,
        environment: request.environment ?? {},
        timeoutMs: request.timeoutMs ?? DEFAULT_JAIL_TIMEOUT_MS,
        maxOutputChars: request.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
        signal: request.signal,
      })
    } catch (error) {
      if (layer !== undefined) await layer.overlay.finish(layer.layer).catch(() => undefined)
      throw error
    }
    this.#idle(key, warm)
    const sync =
      layer === undefined
        ? await workspaces.syncOut(mirror, writable)
        : // Counted: the warm jail's run came back only once its processes were counted gone.
          await workspaces.finish(
            { type: 'overlay', layer: layer.layer },
            writable,
            { writable },
            { counted: true },
          )
    // A command that changed something leaves the point empty: the next overlay is mounted
    // once this one's changes are back, after this answer.
    if (shared !== undefined && warm.jail.alive)
      setImmediate(() => void workspaces.prepare(shared.overlay, shared.point, writable))
    // A command over the cgroup's limit may take the whole warm jail with it.
    const killsAfter = warmProcess.running
      ? warmProcess.oomKills()
      : ((await warmProcess.exited).oomKills ?? 0)
    // The supervisor's output already marks what it dropped (output-window.mjs).
    const { stdoutDropped, stderrDropped, ...exit } = outcome
    return {
      ...exit,
      truncated: stdoutDropped + stderrDropped > 0,
      ...(sync === undefined ? {} : { sync }),
      memory: memoryReport({
        limitBytes: this.#host.limits().memoryBytes,
        inCgroup: warmProcess.inMemoryCgroup,
        oomKills: killsAfter - killsBefore,
        exitCode: outcome.exitCode,
        stdout: outcome.stdout,
        stderr: outcome.stderr,
      }),
    }
  }
}

/**
 * Perl, Node and the supervisor, mounted read-only. `perl`, `node`: execute-only copies
 * (execute-only-copy.ts), so the reaper and the supervisor are not dumpable and no command can
 * trace them or write their memory. A root caller's jail runs as `nobody`, who may not be able
 * to reach the supervisor's files (a checkout under a 0700 home): then the caller mounts them
 * for it (`caller-mounts.ts`), with no copy.
 */
function runtimeBinds(perl: string, node: string): JailBind[] {
  return [
    reaperBind(perl),
    { source: node, target: NODE_MOUNT, writable: false },
    { source: SUPERVISOR_FILE, target: SUPERVISOR_MOUNT, writable: false },
    { source: OUTPUT_WINDOW_FILE, target: OUTPUT_WINDOW_MOUNT, writable: false },
  ]
}

/** A foreground command the warm jail can take: nothing but a command, a deadline and output. */
function isPlain(request: JailRequest): boolean {
  return (
    (request.binds === undefined || request.binds.length === 0) &&
    request.stdin === undefined &&
    request.limits === undefined &&
    request.onOutput === undefined
  )
}
