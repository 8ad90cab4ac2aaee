/**
 * @module jail/jail-workspaces
 * How a jail's programs see the workspace: a fresh overlay per command where the layer host
 * runs (decision 0011), else a mirror kept in step (decision 0004), and the order in which
 * their syncs and mounts happen (one at a time: a mirror is synced, or an overlay mounted and
 * read back, never two at once).
 */
import fs from 'node:fs'
import path from 'node:path'
import type { WriteBackLimits } from '../access/write-back/plan-write-back.ts'
import type { HostIdentity } from '../bubblewrap/jail-identity.ts'
import type { WorkspaceView } from '../ports/workspace-view.ts'
import { ownedPrefix } from '../util/owned-folders.ts'
import type { WorkspaceTree } from '../workspace/workspace-tree.ts'
import type { ForkBelow } from './overlay/fork-layer.ts'
import { OverlayWorkspace, type Layer } from './overlay/overlay-workspace.ts'
import { WorkspaceMirror, type SyncReport } from './workspace-mirror.ts'
import { isWithinAny } from '../util/relative-paths.ts'
import { SerialQueue } from '../util/serial-queue.ts'

/** Where one start sees the workspace: a mirror, or an overlay mounted for it. */
export type WorkspaceLayer =
  | { readonly type: 'mirror'; readonly mirror: WorkspaceMirror }
  | { readonly type: 'overlay'; readonly layer: Layer; readonly release?: () => void }
  /** A warm jail's shared mount point, on which each command's overlay is mounted later. */
  | { readonly type: 'point'; readonly mountPoint: string }

/** What the workspaces are made from (a jail's options). */
export interface JailWorkspacesOptions {
  readonly tree: WorkspaceTree
  readonly view: WorkspaceView
  readonly privatePaths?: readonly string[]
  readonly hiddenPaths?: readonly string[]
  readonly temporaryRoot?: string
  readonly writeBack?: WriteBackLimits
  readonly layers?: 'auto' | 'overlay' | 'mirror'
  /**
   * For a fork: main's folder and where the fork differs from it, so the fork's overlays show
   * main's folder below the fork's layer. Without it a fork is mirrored whole.
   */
  readonly below?: ForkBelow
}

/** One jail's view of its workspace; see the module comment. */
export class JailWorkspaces {
  readonly #options: JailWorkspacesOptions
  readonly #identity: HostIdentity
  /** Placeholders a mirrored start mounted: never the program's, skipped by the sync. */
  readonly #mountPoints: () => Iterable<string>
  #mirror: WorkspaceMirror | undefined
  /** The overlays, once tried: undefined before, null when the mirror serves instead. */
  #overlay: OverlayWorkspace | null | undefined
  #overlayUnavailable: string | undefined
  /** The one opening of the overlays: callers at once all wait for the same outcome. */
  #opening: Promise<OverlayWorkspace | undefined> | undefined
  readonly #serial = new SerialQueue()
  #closed = false

  constructor(
    options: JailWorkspacesOptions,
    identity: HostIdentity,
    mountPoints: () => Iterable<string>,
  ) {
    this.#options = options
    this.#identity = identity
    this.#mountPoints = mountPoints
  }

  /**
   * How programs see the workspace: through a fresh overlay per command, or a mirror (with why
   * the overlay could not serve, when it was tried). `undecided` before the first command.
   */
  get layers(): { readonly mode: 'overlay' | 'mirror' | 'undecided'; readonly reason?: string } {
    if (this.#overlay === undefined) return { mode: 'undecided' }
    if (this.#overlay !== null) return { mode: 'overlay' }
    return this.#overlayUnavailable === undefined
      ? { mode: 'mirror' }
      : { mode: 'mirror', reason: this.#overlayUnavailable }
  }

  /** The overlays already opened, if they serve (for a start being prepared). */
  get openOverlay(): OverlayWorkspace | undefined {
    return this.#overlay ?? undefined
  }

  /**
   * The overlays, where they serve this jail: a workspace folder, unless the options ask for
   * the mirror. If the layer host cannot start, the mirror serves (still confined) and the
   * reason is kept in {@link layers}.
   */
  overlay(): Promise<OverlayWorkspace | undefined> {
    this.#opening ??= this.#openOverlay()
    return this.#opening
  }

  async #openOverlay(): Promise<OverlayWorkspace | undefined> {
    if (this.#overlay === undefined) {
      const mode = this.#options.layers ?? 'auto'
      const fork = this.#options.tree.root === undefined ? this.#options.below : undefined
      const root = this.#options.tree.root ?? fork?.root
      if (mode === 'mirror' || root === undefined) {
        this.#overlay = null
      } else {
        const overlay = new OverlayWorkspace({
          tree: this.#options.tree,
          root,
          ...(fork === undefined ? {} : { fork }),
          view: this.#options.view,
          identity: this.#identity,
          privatePaths: this.privateRelativePaths(),
          ...(this.#options.temporaryRoot === undefined
            ? {}
            : { temporaryRoot: this.#options.temporaryRoot }),
          ...(this.#options.writeBack === undefined ? {} : { limits: this.#options.writeBack }),
        })
        this.#overlay = overlay
        try {
          await overlay.ready
        } catch (error) {
          await overlay.close()
          this.#overlayUnavailable = (error as Error).message
          if (mode === 'overlay') throw error
          this.#overlay = null
        }
      }
    }
    const overlay = this.#overlay
    if (overlay === undefined || overlay === null) return undefined
    await overlay.ready
    return overlay
  }

  /** Mounts a fresh overlay on `point`, in turn with every other sync and mount. */
  mount(overlay: OverlayWorkspace, point: string, writable: boolean): Promise<Layer> {
    return this.#serialize(() => overlay.mount(point, writable))
  }

  /** The workspace of one cold start: a fresh overlay on a point of its own, or the mirror. */
  async prepareCold(writable: boolean): Promise<WorkspaceLayer> {
    const overlay = await this.overlay()
    if (overlay === undefined) return { type: 'mirror', mirror: await this.syncIn() }
    const point = await overlay.privatePoint()
    try {
      const layer = await this.mount(overlay, point, writable)
      return { type: 'overlay', layer, release: () => overlay.releasePoint(point) }
    } catch (error) {
      overlay.releasePoint(point)
      throw error
    }
  }

  /**
   * Brings back what one start changed, and ends its overlay. `next`: a warm jail's command,
   * whose point gets the next command's overlay ahead (overlay-workspace.ts, `finish`).
   */
  async finish(
    workspace: WorkspaceLayer,
    writable: boolean,
    next?: { readonly writable: boolean },
    options: { readonly counted?: boolean } = {},
  ): Promise<SyncReport | undefined> {
    if (workspace.type === 'mirror') return this.syncOut(workspace.mirror, writable)
    if (workspace.type === 'point') return undefined
    const overlay = this.#overlay
    if (overlay === undefined || overlay === null) return undefined
    // The point is let go of once the overlay is unmounted, which may follow the answer. Without
    // `next`, a cold start's: its whole jail ended.
    const finishing = {
      ...(workspace.release === undefined ? {} : { release: workspace.release }),
      jailEnded: next === undefined,
    }
    if (next === undefined || options.counted !== true)
      return this.#serialize(() => overlay.finish(workspace.layer, next, finishing))
    // `counted`: a warm jail's command whose processes the host counted gone. Answered once the
    // report is known; the unmount and the next mount stay in turn before any later mount.
    let answer: (report: SyncReport | undefined) => void = () => undefined
    const answered = new Promise<SyncReport | undefined>((resolve) => (answer = resolve))
    const whole = this.#serialize(() =>
      overlay.finish(workspace.layer, next, { ...finishing, answer }),
    )
    // After an early answer a failed unmount only leaves the unchanged layer below the next
    // command's; the command itself was answered.
    whole.catch(() => undefined)
    return Promise.race([answered, whole])
  }

  /**
   * Mounts the next command's overlay on a warm jail's point ahead of it, in turn with every
   * other sync and mount. Off the commands' path: a failure only means the next one mounts its
   * own. `wanted`: asked again when its turn comes (a jail started ahead may be taken or ended
   * meanwhile); nothing is mounted unless it says yes.
   */
  prepare(
    overlay: OverlayWorkspace,
    point: string,
    writable: boolean,
    wanted: () => boolean = () => true,
  ): Promise<void> {
    if (this.#closed) return Promise.resolve()
    return this.#serialize(() =>
      this.#closed || !wanted() ? Promise.resolve() : overlay.prepare(point, writable),
    ).catch(() => undefined)
  }

  /** Unmounts what was mounted ahead on a warm jail's point (that jail ended). */
  discardPrepared(overlay: OverlayWorkspace, point: string): Promise<void> {
    return this.#serialize(() => overlay.discardPrepared(point)).catch(() => undefined)
  }

  /** Brings what changed on the host into the mirror. */
  async syncIn(): Promise<WorkspaceMirror> {
    // Read-only mounts could protect the root's .git/hooks, .envrc and the like, but not the
    // same names in a nested repository a program creates (sub/.git/config with core.fsmonitor
    // runs when an editor scans sub). Only the sync back through the view judges every path at
    // any depth (§9, §29).
    const mirror = this.#ensureMirror()
    await this.#serialize(() => mirror.syncIn())
    return mirror
  }

  /** Sends what a program changed in the mirror back through the view. */
  async syncOut(
    mirror: WorkspaceMirror | undefined,
    writable: boolean,
  ): Promise<SyncReport | undefined> {
    if (mirror === undefined || !writable || this.#closed) return undefined
    const mountPoints = new Set(
      [...this.#mountPoints()].map((hostPath) => path.relative(mirror.root, hostPath)),
    )
    return this.#serialize(() => mirror.syncOut(mountPoints))
  }

  /** eitri's state and configuration inside the workspace, as workspace-relative paths. */
  privateRelativePaths(): string[] {
    const hidden = this.#options.hiddenPaths ?? []
    const root = this.#options.tree.root ?? this.#options.below?.root
    if (root === undefined) return [...hidden]
    const fromHost = (this.#options.privatePaths ?? [])
      .map((hostPath) => path.relative(root, hostPath))
      .filter(
        (relative) => relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative),
      )
    return [...new Set([...hidden, ...fromHost])]
  }

  /** Waits for the syncs and mounts under way, then removes the mirror and ends the overlays. */
  async close(): Promise<void> {
    this.#closed = true
    await this.#serial.settled()
    if (this.#mirror !== undefined) fs.rmSync(this.#mirror.root, { recursive: true, force: true })
    if (this.#overlay) await this.#overlay.close()
  }

  #ensureMirror(): WorkspaceMirror {
    if (this.#mirror !== undefined) return this.#mirror
    const root = fs.mkdtempSync(ownedPrefix('mirror', this.#options.temporaryRoot))
    fs.chownSync(root, this.#identity.uid, this.#identity.gid)
    fs.chmodSync(root, 0o700)
    const privateRelative = this.privateRelativePaths()
    this.#mirror = new WorkspaceMirror({
      root,
      tree: this.#options.tree,
      view: this.#options.view,
      owner: this.#identity,
      ...(this.#options.writeBack === undefined ? {} : { limits: this.#options.writeBack }),
      isPrivate: (relative) => isWithinAny(relative, privateRelative),
    })
    return this.#mirror
  }

  #serialize<T>(work: () => Promise<T>): Promise<T> {
    return this.#serial.run(work)
  }
}
