/**
 * @module jail/overlay/overlay-workspace
 * The workspace as a root caller's jail sees it: a fresh overlay for each command, the live
 * workspace below (read-only), a new empty upper layer above. What the command changes lands
 * in the upper layer and nowhere else; afterwards exactly that is read (upper-layer.ts), judged
 * and written back (write-back.ts), and the layer is thrown away. Nothing is copied or walked
 * whole, so a command costs what it changed, not what the workspace holds.
 *
 * The mounts are made by a layer host (layer-host.ts) in its own mount namespace, where every
 * bubblewrap of this workspace starts. The workspace is first bound there with an id mapping
 * (its owner appears as the jail's user, so the unprivileged jail can change existing files
 * and git in the jail sees its own repository) at a neutral path, so the jail never learns
 * where the workspace lives. A warm jail binds a shared mount point once; each command's
 * overlay is mounted on that point afterwards and reaches the running jail by propagation, so
 * no process in the jail ever holds a capability. Private paths (eitri's state and
 * configuration, when they lie inside the workspace) are covered with empty read-only mounts
 * (a folder that lists as empty, a file nothing reads) on every overlay before the command starts.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {
  DEFAULT_MAX_KEPT_BYTES,
  type WriteBackLimits,
} from '../../access/write-back/plan-write-back.ts'
import type { WorkspaceView } from '../../ports/workspace-view.ts'
import type { WorkspaceTree } from '../../workspace/workspace-tree.ts'
import type { CallerMount } from '../../bubblewrap/caller-mounts.ts'
import type { HostIdentity } from '../../bubblewrap/jail-identity.ts'
import type { SyncReport } from '../write-back.ts'
import { KeptLayer } from './kept-layer.ts'
import { ForkLayer, type ForkBelow } from './fork-layer.ts'
import { LayerHost } from './layer-host.ts'
import {
  coverKey,
  isEmptyLayer,
  pendingLayer,
  type PendingLayer,
  type PreparedLayer,
} from './prepared-layer.ts'
import { coverPlan, coverRequest, type Cover } from './private-covers.ts'
import { ForkKeepFolder } from './fork-keep.ts'
import { MountedAhead } from './mounted-ahead.ts'
import {
  changeClock,
  makeLayerRoot,
  removeLayer,
  removeLayerRoot,
  removeMountPoint,
} from './layer-folders.ts'
import { writeBackLayer } from './layer-write-back.ts'

/**
 * Overlay options: no folder redirects, no metadata-only copies, no index, so the upper layer
 * holds whole files and plain folders that the host can read without the overlay's help. A
 * folder that exists below therefore cannot be renamed in the jail (`EXDEV`); `mv` copies it.
 */
const OVERLAY_OPTIONS = 'redirect_dir=nofollow,metacopy=off,index=off,xino=off'

/**
 * The attribute the overlay marks an opaque folder with: a root caller's overlay keeps its
 * marks in `trusted.*`; one mounted in a user namespace (`userxattr`) in `user.*`.
 */
const OPAQUE_ATTRIBUTE = { trusted: 'trusted.overlay.opaque', user: 'user.overlay.opaque' }

/** One command's overlay. */
export interface Layer {
  /** Where the overlay is mounted, in the layer host's namespace. */
  readonly mountPoint: string
  /** The upper layer, or undefined for a read-only overlay. */
  readonly upper: string | undefined
  readonly folder: string
  /** When it was mounted, in the clock of file change times. */
  readonly startedMs: number
  /** Lets go of the fork layer the overlay reads, once it is unmounted. */
  readonly release?: () => void
  /** The fork's files this overlay could not show, not reported before. */
  readonly hidden?: readonly { path: string; reason: string }[]
}

/** One workspace's overlays; see the module comment. */
export class OverlayWorkspace {
  readonly #tree: WorkspaceTree
  readonly #view: WorkspaceView
  readonly #identity: HostIdentity
  readonly #privatePaths: readonly string[]
  readonly #limits: WriteBackLimits | undefined
  readonly #root: string
  readonly #workspace: string
  readonly #host: LayerHost
  readonly #userNamespace: boolean
  readonly #madeCallerMounts = new Set<string>()
  readonly #sharedPoints = new Map<string, Promise<string>>()
  /** Overlays mounted ahead of their commands, and the points in use (mounted-ahead.ts). */
  readonly #ahead = new MountedAhead({
    unmount: (mountPoint) => this.#host.unmount(mountPoint).catch(() => undefined),
    drop: (pending) => this.#drop(pending),
  })
  /** What commands wrote that is not written back, below their upper layers (kept-layer.ts). */
  readonly #kept: KeptLayer
  /** A fork's folder under eitri's state that keeps its kept layer across restarts. */
  readonly #keep: ForkKeepFolder | undefined
  /** The command layers' folder, as the host names it. */
  readonly #layersFolder: string
  /**
   * The kept layer and the command layers' folder as the overlay's options name them
   * (neutral: the jail can read its mounts).
   */
  readonly #keptMounted: string
  readonly #layersMounted: string
  /** A fork's layer between main's folder and the rest; undefined for main. */
  readonly #fork: ForkLayer | undefined
  #counter = 0
  readonly #removals = new Set<Promise<void>>()
  /** Resolves once the workspace is bound below its neutral path. */
  readonly ready: Promise<void>

  constructor(options: {
    tree: WorkspaceTree
    /** The workspace folder: the tree's root, or main's folder below a fork. */
    root: string
    /** For a fork: main's folder and where the fork differs from it (fork-layer.ts). */
    fork?: ForkBelow
    view: WorkspaceView
    identity: HostIdentity
    /** Workspace-relative paths covered in every overlay. */
    privatePaths: readonly string[]
    temporaryRoot?: string
    limits?: WriteBackLimits
  }) {
    this.#tree = options.tree
    this.#workspace = options.root
    this.#view = options.view
    this.#identity = options.identity
    this.#privatePaths = options.privatePaths
    this.#limits = options.limits
    const layerRoot = makeLayerRoot({
      temporaryRoot: options.temporaryRoot ?? os.tmpdir(),
      fork: options.fork,
      mainRoot: options.root,
    })
    const { keep, keptFolder } = layerRoot
    this.#root = layerRoot.root
    this.#keep = keep instanceof ForkKeepFolder ? keep : undefined
    this.#layersFolder = layerRoot.layersFolder
    this.#keptMounted = layerRoot.keptMounted
    this.#layersMounted = layerRoot.layersMounted
    // A root caller's jail runs as another user: the workspace's owner is mapped to it. A
    // caller that is not root runs its jail as itself, from a user namespace of its own.
    this.#userNamespace = !options.identity.dropped
    this.#host = new LayerHost({ userNamespace: this.#userNamespace })
    const workspace = fs.statSync(options.root)
    const lower = path.join(this.#root, 'lower')
    const host = this.#host
    this.#fork =
      options.fork === undefined
        ? undefined
        : new ForkLayer({
            folder: path.join(this.#root, 'fork'),
            below: options.fork,
            fork: options.tree,
            ...(this.#userNamespace ? {} : { owner: options.identity }),
            whiteout: (paths) => host.whiteout(paths),
            rootMode: workspace.mode,
          })
    this.#kept = new KeptLayer({
      folder: keptFolder,
      tree: options.tree,
      maxBytes: options.limits?.maxKeptBytes ?? DEFAULT_MAX_KEPT_BYTES,
      forked: options.fork !== undefined,
      opaque: (folders) => this.#opaque(folders),
      keep: this.#keep,
      notKept: keep instanceof ForkKeepFolder ? undefined : keep?.reason,
    })
    const keptAt = this.#keep?.folder
    this.ready = this.#host.ready.then(async () => {
      if (keptAt !== undefined) await host.bind(keptAt, path.join(this.#root, 'keep'), 'rw')
      await (this.#userNamespace
        ? // Bound at a neutral path all the same, so the mount table never names the workspace.
          this.#host.bind(options.root, lower, 'rw')
        : this.#host.idmappedBind(
            options.root,
            lower,
            { uid: workspace.uid, gid: workspace.gid },
            { uid: options.identity.uid, gid: options.identity.gid },
          ))
    })
    this.ready.catch(() => undefined)
  }

  /** Arguments that start bubblewrap in the layer host's namespace. */
  enter(): string[] {
    return this.#host.enter()
  }

  /** The namespaces a start enters (see {@link LayerHost.namespaces}). */
  namespaces(): { type: 'user' | 'mnt'; path: string }[] {
    return this.#host.namespaces()
  }

  /** Makes the caller mounts a start needs, once each, in the layer host's namespace. */
  async callerMounts(mounts: readonly CallerMount[]): Promise<void> {
    for (const mount of mounts) {
      const key = `${mount.mountPoint}:${mount.writable ? 'rw' : 'ro'}`
      if (this.#madeCallerMounts.has(key)) continue
      await this.#host.bind(mount.source, mount.mountPoint, mount.writable ? 'rw' : 'ro')
      this.#madeCallerMounts.add(key)
    }
  }

  /**
   * A mount point a warm jail binds once, shared: each command's overlay is mounted on it
   * later and reaches the jail. One per name (an access level).
   */
  sharedPoint(name: string): Promise<string> {
    const known = this.#sharedPoints.get(name)
    if (known !== undefined) return known
    const made = (async () => {
      await this.ready
      const point = path.join(this.#root, 'points', name)
      fs.mkdirSync(point, { mode: 0o755 })
      await this.#host.share(point)
      return point
    })()
    this.#sharedPoints.set(name, made)
    made.catch(() => this.#sharedPoints.delete(name))
    return made
  }

  /**
   * A shared mount point of its own for one jail started ahead of its command
   * (prestarted-jail.ts): the command's overlay is mounted on it later and reaches that jail.
   * Given back with {@link releaseSharedPoint}.
   */
  async jobSharedPoint(): Promise<string> {
    await this.ready
    const point = path.join(this.#root, 'points', `job-${++this.#counter}`)
    fs.mkdirSync(point, { mode: 0o755 })
    try {
      await this.#host.share(point)
    } catch (error) {
      this.releasePoint(point)
      throw error
    }
    return point
  }

  /** Unmounts a point from {@link jobSharedPoint} (after its overlay) and removes it. */
  releaseSharedPoint(point: string): void {
    void this.#host
      .unmount(point)
      .catch(() => undefined)
      .then(() => this.releasePoint(point))
  }

  /** A mount point of its own for one cold start (a background job). */
  async privatePoint(): Promise<string> {
    await this.ready
    const point = path.join(this.#root, 'points', `job-${++this.#counter}`)
    fs.mkdirSync(point, { mode: 0o755 })
    return point
  }

  /**
   * Mounts a fresh overlay on `mountPoint`: writable with a new upper layer, or read-only. One
   * mounted ahead on that point (see {@link finish} and {@link prepare}) is taken if what it
   * was made from still holds.
   */
  async mount(mountPoint: string, writable: boolean): Promise<Layer> {
    await this.ready
    const prepared = await this.#takePrepared(mountPoint, writable)
    const pending = prepared ?? (await this.#mountPending(mountPoint, writable)).pending
    this.#ahead.setInUse(mountPoint, true)
    return this.#started(pending)
  }

  /** Mounts a new layer on `mountPoint`, with the private paths covered. */
  async #mountPending(mountPoint: string, writable: boolean): Promise<PreparedLayer> {
    await this.#kept.yieldKept()
    await this.#fork?.update()
    const pending = this.#pendingLayer(mountPoint, writable)
    const covers = await this.#coverPlan(mountPoint)
    const { done, error } = await this.#host.chain([pending.request, ...covers.map(coverRequest)])
    if (error !== undefined) {
      if (done > 0) await this.#host.unmount(mountPoint).catch(() => undefined)
      this.#drop(pending)
      throw error
    }
    return { pending, covers: coverKey(covers) }
  }

  /**
   * Mounts the next command's overlay on a warm jail's point ahead of it, unless one is there.
   * Off the commands' path; a failure leaves the point empty and the next command mounts its own.
   */
  async prepare(mountPoint: string, writable: boolean): Promise<void> {
    await this.ready
    if (!this.#ahead.isFree(mountPoint)) return
    this.#ahead.hold(mountPoint, await this.#mountPending(mountPoint, writable))
  }

  /** Unmounts and removes the overlay mounted ahead on `mountPoint`, if any. */
  discardPrepared(mountPoint: string): Promise<void> {
    return this.#ahead.discard(mountPoint)
  }

  /**
   * Ends a command's overlay: unmounts it (nothing in the jail can reach the layer after), and
   * for a writable one brings back what the command changed. The layer is removed either way.
   * `next`: a warm jail's command, whose point gets the next command's overlay in the same
   * exchange as the unmount, kept only if this command changed nothing (then bringing it back
   * changes no lower layer). `release`: lets go of the layer's mount point, once the layer is
   * unmounted. `jailEnded`: a cold start's, whose whole jail has ended; if it changed nothing,
   * the unmount follows the answer. `answer`: a warm jail's whose processes the host counted
   * gone (warm-jail.ts), told the report as soon as it is known: for a command that changed
   * nothing, before the unmount and the next mount (decision 0058).
   */
  async finish(
    layer: Layer,
    next?: { readonly writable: boolean },
    options: {
      readonly release?: () => void
      readonly jailEnded?: boolean
      readonly answer?: (report: SyncReport | undefined) => void
    } = {},
  ): Promise<SyncReport | undefined> {
    const release = options.release
    if (next === undefined && options.jailEnded === true && isEmptyLayer(layer.upper))
      return this.#endUnchanged(layer, release)
    try {
      const unchanged =
        next !== undefined &&
        isEmptyLayer(layer.upper) &&
        (await this.#kept.keptYields()).length === 0
      // Nothing of the command runs any more (counted), so an empty upper layer stays empty: the
      // answer need not wait for the unmount. A write after all is dropped below, as a cold
      // start's after its check is, never brought back unjudged or unreported.
      const answered = unchanged && options.answer !== undefined
      if (answered) options.answer?.(unchangedReport(layer))
      const ahead = unchanged ? await this.#aheadOf(layer.mountPoint, next.writable) : undefined
      const { done, error } = await this.#host.chain([
        ['umount', layer.mountPoint],
        ...(ahead === undefined ? [] : ahead.requests),
      ])
      // Not even the unmount: the command's layer is still mounted.
      if (error !== undefined && done === 0) {
        if (ahead !== undefined) this.#drop(ahead.pending)
        throw error
      }
      this.#ahead.setInUse(layer.mountPoint, false)
      if (ahead !== undefined) {
        if (error === undefined) {
          this.#ahead.hold(layer.mountPoint, { pending: ahead.pending, covers: ahead.covers })
        } else {
          if (done > 1) await this.#host.unmount(layer.mountPoint).catch(() => undefined)
          this.#drop(ahead.pending)
        }
      }
      layer.release?.()
      if (layer.upper === undefined) return undefined
      // Written meanwhile after all (the check above came before the unmount): the next
      // overlay must not be mounted while its lower layers change.
      if (!isEmptyLayer(layer.upper)) await this.discardPrepared(layer.mountPoint)
      if (answered) return unchangedReport(layer)
      const report = await writeBackLayer({
        upper: layer.upper,
        startedMs: layer.startedMs,
        tree: this.#tree,
        view: this.#view,
        limits: this.#limits,
        privatePaths: this.#privatePaths,
        workspace: this.#workspace,
        forked: this.#fork !== undefined,
        kept: this.#kept,
        opaque: (folders) => this.#opaque(folders),
      })
      return layer.hidden === undefined ? report : { ...report, hidden: [...layer.hidden] }
    } finally {
      this.#removeLater(layer.folder)
      release?.()
    }
  }

  /**
   * Ends a cold start's overlay that its command left unchanged (an empty upper layer, or a
   * read-only overlay): there is nothing to bring back, so the answer does not wait for the
   * unmount, which the layer host runs next, before any later request. Nothing of the jail runs
   * any more (its bubblewrap ended, and with its PID 1 every process in it); a write that came
   * after the check would be lost as one after the unmount is, never brought back unjudged.
   */
  #endUnchanged(layer: Layer, release: (() => void) | undefined): SyncReport | undefined {
    void this.#host.unmount(layer.mountPoint).then(
      () => {
        this.#ahead.setInUse(layer.mountPoint, false)
        layer.release?.()
        this.#removeLater(layer.folder)
        release?.()
      },
      // Still mounted: its folders stay until the jail closes (the host's namespace goes).
      () => release?.(),
    )
    return unchangedReport(layer)
  }

  /** The next overlay of a point and the requests that mount and cover it. */
  async #aheadOf(
    mountPoint: string,
    writable: boolean,
  ): Promise<PreparedLayer & { requests: (readonly string[])[] }> {
    // The fork layer as it is: if the fork changed meanwhile, the command's update sees it.
    const pending = this.#pendingLayer(mountPoint, writable)
    const covers = await this.#coverPlan(mountPoint)
    return {
      pending,
      requests: [pending.request, ...covers.map(coverRequest)],
      covers: coverKey(covers),
    }
  }

  /** The overlay mounted ahead on `mountPoint`, if what it was made from still holds. */
  #takePrepared(mountPoint: string, writable: boolean): Promise<PendingLayer | undefined> {
    return this.#ahead.take(mountPoint, async (prepared) => {
      if (prepared.pending.writable !== writable) return false
      if ((await this.#kept.keptYields()).length > 0) return false
      await this.#fork?.update()
      return (
        this.#lowers().join(':') === prepared.pending.lowers &&
        coverKey(await this.#coverPlan(mountPoint)) === prepared.covers
      )
    })
  }

  /** A mounted layer handed to its command: its clock starts now. */
  #started(pending: PendingLayer): Layer {
    const hidden = this.#fork?.takeLeftOut() ?? []
    return {
      mountPoint: pending.mountPoint,
      upper: pending.upper,
      folder: pending.folder,
      startedMs: changeClock(pending.folder),
      ...(pending.release === undefined ? {} : { release: pending.release }),
      ...(hidden.length === 0 ? {} : { hidden }),
    }
  }

  /** The lower layers a command's overlay has now, top first. */
  #lowers(): string[] {
    return [
      ...(this.#kept.isEmpty() ? [] : [this.#keptMounted]),
      ...(this.#fork === undefined ? [] : [this.#fork.folder]),
      path.join(this.#root, 'lower'),
    ]
  }

  /** A new layer's folders, its fork lease and the request that mounts it on `mountPoint`. */
  #pendingLayer(mountPoint: string, writable: boolean): PendingLayer {
    const name = String(++this.#counter)
    return pendingLayer({
      mountPoint,
      writable,
      folder: path.join(this.#layersFolder, name),
      mounted: path.join(this.#layersMounted, name),
      lowers: () => this.#lowers(),
      lease: () => this.#fork?.lease(),
      rootMode: fs.statSync(this.#workspace).mode,
      ...(this.#userNamespace ? {} : { owner: this.#identity }),
      options: this.#options(),
    })
  }

  /** Lets go of a layer that was never handed to a command (unmounted, or never mounted). */
  #drop(pending: PendingLayer): void {
    pending.release?.()
    this.#removeLater(pending.folder)
  }

  /** Removes a layer's folder off the command's path: nothing mounts or reads it again. */
  #removeLater(folder: string): void {
    this.#track(removeLayer(folder))
  }

  /** Keeps a removal under way until it ends, so {@link close} waits for it. */
  #track(removal: Promise<void>): void {
    removal = removal.catch(() => undefined)
    this.#removals.add(removal)
    void removal.finally(() => this.#removals.delete(removal))
  }

  /**
   * What the program runs as inside, for a start from the layer host's user namespace (where
   * the caller is root): the caller itself.
   */
  runAs(): { uid: number; gid: number } | undefined {
    return this.#userNamespace ? { uid: this.#identity.uid, gid: this.#identity.gid } : undefined
  }

  #options(): string {
    return this.#userNamespace ? `userxattr,${OVERLAY_OPTIONS}` : OVERLAY_OPTIONS
  }

  /** Removes an unused private mount point. */
  releasePoint(mountPoint: string): void {
    this.#track(removeMountPoint(mountPoint))
  }

  /**
   * Ends the layer host (its mounts go with its namespace) and removes the folders; a fork's
   * kept layer under eitri's state stays for the next process, unless the fork is done with.
   */
  async close(): Promise<void> {
    this.#host.close()
    // Their mounts go with the host's namespace, their folders with the layers' folder.
    this.#ahead.close()
    const released = this.#keep?.release()
    await Promise.all(this.#removals)
    if (this.#keep === undefined) {
      await removeLayer(this.#layersFolder, 1)
      await removeLayer(this.#kept.folder)
    }
    this.#fork?.close()
    await removeLayerRoot(this.#root)
    await released
  }

  /** The closed placeholders that cover the private paths on an overlay (private-covers.ts). */
  #coverPlan(mountPoint: string): Promise<Cover[]> {
    return coverPlan({
      mountPoint,
      privatePaths: this.#privatePaths,
      placeholders: this.#root,
      tree: this.#tree,
      below: this.#fork === undefined ? undefined : this.#workspace,
    })
  }

  /** Which of an upper layer's folders (absolute paths) the overlay marked opaque. */
  #opaque(folders: readonly string[]): Promise<boolean[]> {
    const attribute = this.#userNamespace ? OPAQUE_ATTRIBUTE.user : OPAQUE_ATTRIBUTE.trusted
    return this.#host.opaque(attribute, folders)
  }
}

/** The report of a command that changed nothing: none for a read-only overlay. */
function unchangedReport(layer: Layer): SyncReport | undefined {
  if (layer.upper === undefined) return undefined
  const report: SyncReport = { written: [], deleted: [], refused: [], kept: [] }
  return layer.hidden === undefined ? report : { ...report, hidden: [...layer.hidden] }
}
