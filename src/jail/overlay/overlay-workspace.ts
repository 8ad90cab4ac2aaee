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
 * configuration, when they lie inside the workspace) are covered with closed, empty read-only
 * mounts on every overlay before the command starts.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {
  DEFAULT_MAX_KEPT_BYTES,
  formatBytes,
  type WriteBackLimits,
} from '../../access/write-back/plan-write-back.ts'
import type { WorkspaceView } from '../../ports/workspace-view.ts'
import type { WorkspaceTree } from '../../workspace/workspace-tree.ts'
import type { CallerMount } from '../../bubblewrap/caller-mounts.ts'
import type { HostIdentity } from '../../bubblewrap/jail-identity.ts'
import { removePinned } from '../pinned-folder.ts'
import { writeBack, type SyncReport } from '../write-back.ts'
import { ownedPrefix } from '../../util/owned-folders.ts'
import { ignoredPathsOf } from '../../workspace/ignored-paths.ts'
import { keepLayer, mergedFolders, onlyIndex, toldAs } from './kept-layer-merge.ts'
import { allocatedBytes, keptGrowth } from './kept-size.ts'
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
import { changeClock, claimKeep, removeLayer } from './layer-folders.ts'
import { readUpperLayer } from './upper-layer.ts'
import { isWithin, isWithinAny } from '../../util/relative-paths.ts'

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
  /** Overlays mounted ahead of their commands, by mount point (prepared-layer.ts). */
  readonly #prepared = new Map<string, PreparedLayer>()
  /** Points a command's overlay is mounted on now: nothing is mounted ahead over it. */
  readonly #inUse = new Set<string>()
  /**
   * Repositories commands made where there was none: never written back, but kept in a layer
   * between the workspace and each command's upper layer, so the next command still has them
   * (the command that made one says so, once). In a fork, git's own files and ignored files
   * are kept so too, silently: that is where they belong.
   */
  readonly #kept = new Set<string>()
  /** The kept layer's disk use, once measured (kept-size.ts). */
  #keptBytes: number | undefined
  /** What a fork kept apart that the model was told of (each once). */
  readonly #told = new Set<string>()
  /**
   * A fork's folder under eitri's state that keeps its kept layer across restarts
   * (fork-keep.ts); undefined for main, or with why in {@link #notKept} when it cannot serve.
   */
  readonly #keep: ForkKeepFolder | undefined
  readonly #notKept: string | undefined
  /** The kept layer and the command layers' folder, as the host names them. */
  readonly #keptFolder: string
  readonly #layersFolder: string
  /** The same, as the overlay's options name them (neutral: the jail can read its mounts). */
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
    this.#root = fs.mkdtempSync(ownedPrefix('layers', options.temporaryRoot ?? os.tmpdir()))
    // Passable, not listable: the jail's user reaches its mount points by name only.
    fs.chmodSync(this.#root, 0o711)
    for (const folder of ['lower', 'points']) fs.mkdirSync(path.join(this.#root, folder))
    fs.chmodSync(path.join(this.#root, 'points'), 0o711)
    const keep = claimKeep(options.fork, options.root)
    if (keep instanceof ForkKeepFolder) {
      this.#keep = keep
      for (const relative of keep.paths()) this.#kept.add(relative)
      this.#keptFolder = keep.kept
      this.#layersFolder = keep.layers
      // The fork's folder is bound at a neutral path (below), so the overlay's options, which
      // the jail can read in its mount table, never name eitri's state folder.
      fs.mkdirSync(path.join(this.#root, 'keep'))
      this.#keptMounted = path.join(this.#root, 'keep', path.basename(keep.kept))
      this.#layersMounted = path.join(this.#root, 'keep', path.basename(keep.layers))
    } else {
      this.#notKept = keep?.reason
      this.#keptFolder = this.#keptMounted = path.join(this.#root, 'kept')
      this.#layersFolder = this.#layersMounted = path.join(this.#root, 'layers')
      fs.mkdirSync(this.#keptFolder)
      fs.mkdirSync(this.#layersFolder, { mode: 0o700 })
    }
    // What private paths are covered with: nothing to list or read, not even for their owner.
    fs.mkdirSync(path.join(this.#root, 'closed-folder'), { mode: 0o000 })
    fs.chmodSync(path.join(this.#root, 'closed-folder'), 0o000)
    fs.writeFileSync(path.join(this.#root, 'closed-file'), '', { mode: 0o000 })
    fs.chmodSync(path.join(this.#root, 'closed-file'), 0o000)
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
    this.#inUse.add(mountPoint)
    return this.#started(pending)
  }

  /** Mounts a new layer on `mountPoint`, with the private paths covered. */
  async #mountPending(mountPoint: string, writable: boolean): Promise<PreparedLayer> {
    await this.#yieldKept()
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
    if (this.#prepared.has(mountPoint) || this.#inUse.has(mountPoint)) return
    this.#prepared.set(mountPoint, await this.#mountPending(mountPoint, writable))
  }

  /** Unmounts and removes the overlay mounted ahead on `mountPoint`, if any. */
  async discardPrepared(mountPoint: string): Promise<void> {
    const prepared = this.#prepared.get(mountPoint)
    if (prepared === undefined) return
    this.#prepared.delete(mountPoint)
    await this.#host.unmount(mountPoint).catch(() => undefined)
    this.#drop(prepared.pending)
  }

  /**
   * Ends a command's overlay: unmounts it (nothing in the jail can reach the layer after), and
   * for a writable one brings back what the command changed. The layer is removed either way.
   * `next`: a warm jail's command, whose point gets the next command's overlay in the same
   * exchange as the unmount, kept only if this command changed nothing (then bringing it back
   * changes no lower layer).
   */
  async finish(
    layer: Layer,
    next?: { readonly writable: boolean },
  ): Promise<SyncReport | undefined> {
    try {
      const ahead =
        next !== undefined && isEmptyLayer(layer.upper) && (await this.#keptYields()).length === 0
          ? await this.#aheadOf(layer.mountPoint, next.writable)
          : undefined
      const { done, error } = await this.#host.chain([
        ['umount', layer.mountPoint],
        ...(ahead === undefined ? [] : ahead.requests),
      ])
      // Not even the unmount: the command's layer is still mounted.
      if (error !== undefined && done === 0) {
        if (ahead !== undefined) this.#drop(ahead.pending)
        throw error
      }
      this.#inUse.delete(layer.mountPoint)
      if (ahead !== undefined) {
        if (error === undefined) {
          this.#prepared.set(layer.mountPoint, { pending: ahead.pending, covers: ahead.covers })
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
      const report = await this.#writeBack(layer, layer.upper)
      return layer.hidden === undefined ? report : { ...report, hidden: [...layer.hidden] }
    } finally {
      this.#removeLater(layer.folder)
    }
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
  async #takePrepared(mountPoint: string, writable: boolean): Promise<PendingLayer | undefined> {
    const prepared = this.#prepared.get(mountPoint)
    if (prepared === undefined) return undefined
    let holds = prepared.pending.writable === writable && (await this.#keptYields()).length === 0
    if (holds) {
      await this.#fork?.update()
      holds =
        this.#lowers().join(':') === prepared.pending.lowers &&
        coverKey(await this.#coverPlan(mountPoint)) === prepared.covers
    }
    if (!holds) {
      await this.discardPrepared(mountPoint)
      return undefined
    }
    this.#prepared.delete(mountPoint)
    return prepared.pending
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
      ...(this.#kept.size === 0 ? [] : [this.#keptMounted]),
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
    const removal = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => removeLayer(folder))
      .catch(() => undefined)
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
    try {
      fs.rmdirSync(mountPoint)
    } catch {
      // still a mount point in some namespace, or gone: left rather than removed recursively
    }
  }

  /**
   * Ends the layer host (its mounts go with its namespace) and removes the folders; a fork's
   * kept layer under eitri's state stays for the next process, unless the fork is done with.
   */
  async close(): Promise<void> {
    this.#host.close()
    // Their mounts go with the host's namespace, their folders with the layers' folder.
    for (const prepared of this.#prepared.values()) prepared.pending.release?.()
    this.#prepared.clear()
    const released = this.#keep?.release()
    if (this.#keep === undefined) {
      removeLayer(this.#layersFolder, 1)
      removeLayer(this.#keptFolder)
    }
    this.#fork?.close()
    for (const placeholder of ['closed-folder', 'closed-file']) {
      // Opened up first: a caller that is not root cannot list a folder of mode 0 to empty it.
      try {
        fs.chmodSync(path.join(this.#root, placeholder), 0o700)
        fs.rmSync(path.join(this.#root, placeholder), { recursive: true, force: true })
      } catch {
        // gone already
      }
    }
    for (const folder of ['points', 'lower', 'keep']) {
      const at = path.join(this.#root, folder)
      for (const name of fs.existsSync(at) && folder === 'points' ? fs.readdirSync(at) : []) {
        this.releasePoint(path.join(at, name))
      }
      try {
        fs.rmdirSync(at)
      } catch {
        // left rather than removed recursively
      }
    }
    try {
      fs.rmdirSync(this.#root)
    } catch {
      // left rather than removed recursively
    }
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

  async #setApart(relative: string, stat: fs.Stats): Promise<boolean> {
    if (relative.split('/').includes('.git')) return true
    // A file the fork tracks is the fork's, whatever the patterns say (as git judges it).
    if ((await this.#tree.stat(relative)) !== undefined) return false
    return ignoredPathsOf(this.#tree).isIgnored(relative, stat.isDirectory() ? 'directory' : 'file')
  }

  async #writeBack(layer: Layer, upper: string): Promise<SyncReport> {
    const isPrivate = (relative: string): boolean => isWithinAny(relative, this.#privatePaths)
    const read = await readUpperLayer({
      upper,
      tree: this.#tree,
      isPrivate,
      startedMs: layer.startedMs,
      // In a fork, git's files (main's repository, below) and what the fork's .gitignore files
      // ignore (build outputs, installed packages) stay in the fork's jail, as they stay out of
      // main's history: never a change of the fork's files, never merged.
      ...(this.#fork === undefined
        ? {}
        : { apart: (relative: string, stat: fs.Stats) => this.#setApart(relative, stat) }),
      opaque: (relatives) =>
        this.#host.opaque(
          this.#userNamespace ? OPAQUE_ATTRIBUTE.user : OPAQUE_ATTRIBUTE.trusted,
          relatives.map((relative) => path.join(upper, relative)),
        ),
    })
    const report: SyncReport = { written: [], deleted: [], refused: [...read.refused], kept: [] }
    const below = (relative: string): boolean => fs.existsSync(path.join(this.#workspace, relative))
    const opaque = await this.#opaqueOverKept(upper, read.apart)
    const apart = this.#roomToKeep(upper, read.apart, below, opaque, report)
    this.#listKept(apart)
    for (const relative of apart) {
      const told = toldAs(relative)
      // git refreshing its index (`git status`) is not worth a word; a commit or a branch is.
      if (!this.#told.has(told) && !onlyIndex(upper, relative)) {
        this.#told.add(told)
        report.kept.push({ path: told, reason: this.#apartReason(told) })
      }
      keepLayer(upper, this.#keptFolder, relative, below, opaque)
    }
    if (read.changes.length === 0) return report
    const { plan, applied, failed } = await writeBack({
      source: upper,
      changes: read.changes,
      tree: this.#tree,
      view: this.#view,
      ...(this.#limits === undefined ? {} : { limits: this.#limits }),
    })
    for (const change of applied) {
      if (change.type === 'delete') report.deleted.push(change.path)
      else report.written.push(change.path)
    }
    report.refused.push(...failed, ...plan.refused)
    // Repositories made in the jail, and derived files git rebuilds (a commit graph): not
    // written, not failures.
    const repositories = plan.kept.map((entry) => entry.path)
    const madeOpaque = await this.#opaqueOverKept(upper, repositories)
    const room = new Set(this.#roomToKeep(upper, repositories, () => false, madeOpaque, report))
    const made = plan.kept.filter((entry) => room.has(entry.path))
    report.kept.push(...made, ...plan.dropped)
    this.#listKept(made.map((entry) => entry.path))
    for (const { path: relative } of made) {
      keepLayer(upper, this.#keptFolder, relative, () => false, madeOpaque)
    }
    return report
  }

  /**
   * The upper layer's folders below `relatives` that the overlay made anew over a deleted one
   * where the kept layer has a folder too: moved in, they replace it instead of merging.
   */
  async #opaqueOverKept(upper: string, relatives: readonly string[]): Promise<Set<string>> {
    const merging = relatives.flatMap((relative) =>
      mergedFolders(upper, this.#keptFolder, relative),
    )
    const flags = await this.#host.opaque(
      this.#userNamespace ? OPAQUE_ATTRIBUTE.user : OPAQUE_ATTRIBUTE.trusted,
      merging.map((relative) => path.join(upper, relative)),
    )
    return new Set(merging.filter((_, index) => flags[index] === true))
  }

  /**
   * Of what the command left apart (`relatives`), what the kept layer has room for, counted as
   * it will be kept (kept-size.ts). A repository's files go whole or not at all (a ref without
   * its objects would break it), so they are counted together; what has no room is told in
   * `report`, and the kept layer stays as it was there. Shrinking always has room.
   */
  #roomToKeep(
    upper: string,
    relatives: readonly string[],
    below: (relative: string) => boolean,
    opaque: ReadonlySet<string>,
    report: SyncReport,
  ): string[] {
    const max = this.#limits?.maxKeptBytes ?? DEFAULT_MAX_KEPT_BYTES
    const groups = new Map<string, string[]>()
    for (const relative of relatives) {
      const told = toldAs(relative)
      groups.set(told, [...(groups.get(told) ?? []), relative])
    }
    const room: string[] = []
    const before = this.#keptBytes
    for (const [told, members] of groups) {
      let growth = 0
      for (const relative of members)
        growth += keptGrowth(upper, this.#keptFolder, relative, below, opaque)
      // Recorded, else measured (once a process, and again after a yield removed some), then
      // kept in step.
      this.#keptBytes ??= this.#keep?.keptBytes() ?? allocatedBytes(this.#keptFolder, '')
      if (growth > 0 && this.#keptBytes + growth > max) {
        report.refused.push({
          path: told,
          reason: `not kept in the jail: with it, what this ${this.#fork === undefined ? 'workspace' : 'fork'}'s jail keeps would take ${formatBytes(this.#keptBytes + growth)} of disk, over the ${formatBytes(max)} it may keep (jail.maxKeptBytes in eitri's configuration), so this command's change there is gone; remove what is no longer needed (rm -rf the build output), or discard the fork, and run it again`,
        })
        continue
      }
      this.#keptBytes += growth
      room.push(...members)
    }
    if (this.#keptBytes !== before) this.#keep?.saveKeptBytes(this.#keptBytes)
    return room
  }

  /**
   * Removes what the kept layer holds where the workspace now has an entry of its own: a kept
   * repository the workspace now has a folder for (a person's `git init`), an ignored file the
   * fork now tracks, or a kept folder where the fork now has a file or link (a folder in a
   * higher layer hides a file below it, so the command would see the kept folder, not the
   * fork's file). The workspace wins; the kept entry goes, with all it holds.
   */
  async #yieldKept(): Promise<void> {
    const before = this.#kept.size
    for (const yielded of await this.#keptYields()) {
      removePinned(this.#keptFolder, yielded)
      for (const other of [...this.#kept]) {
        if (isWithin(other, yielded)) this.#kept.delete(other)
      }
    }
    if (this.#kept.size !== before) {
      this.#keptBytes = undefined
      this.#keep?.saveKeptBytes(undefined)
      this.#keep?.save(this.#kept)
    }
  }

  /** Where the kept layer must give way now (see {@link #yieldKept}); changes nothing. */
  async #keptYields(): Promise<string[]> {
    const yields: string[] = []
    for (const relative of this.#kept) {
      if (isWithinAny(relative, yields)) continue
      const yielded = await this.#yieldedAt(relative)
      if (yielded !== undefined) yields.push(yielded)
    }
    return yields
  }

  /**
   * Where the kept layer must give way for the kept path `relative`: its outermost folder the
   * workspace has a file or link at, or `relative` itself when the workspace has it; undefined
   * when the workspace has nothing there.
   */
  async #yieldedAt(relative: string): Promise<string | undefined> {
    const parts = relative.split('/')
    for (let index = 1; index < parts.length; index++) {
      const folder = parts.slice(0, index).join('/')
      const kind = await this.#tree.kind(folder)
      if (kind === undefined) return undefined
      if (kind !== 'directory') return folder
    }
    return (await this.#tree.stat(relative)) === undefined ? undefined : relative
  }

  /** Adds paths to the kept ones, listed durably before they move in (fork-keep.ts). */
  #listKept(relatives: readonly string[]): void {
    const before = this.#kept.size
    for (const relative of relatives) this.#kept.add(relative)
    if (this.#kept.size !== before) this.#keep?.save(this.#kept)
  }

  /** Why a fork's write stayed in its jail, as the model reads it. */
  #apartReason(told: string): string {
    const what =
      told.split('/').at(-1) === '.git'
        ? "git's own files: what git does in a fork (a commit, a branch) stays in this fork's jail, never in the user's repository"
        : "ignored by a .gitignore: it stays in this fork's jail for later commands, is not a change of the fork and is never merged"
    if (this.#keep !== undefined)
      return `${what}; kept with the fork, also when eitri restarts, until the fork is merged or discarded`
    return `${what}; gone when this eitri process ends (${this.#notKept ?? 'not kept with the fork'})`
  }
}
