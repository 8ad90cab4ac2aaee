/**
 * @module jail/overlay/fork-layer
 * A fork as its programs see it: main's live folder at the bottom, and above it a layer that
 * holds exactly where the fork's files differ from main's now (decision 0011). Where the fork
 * wrote, the layer has the fork's file; where main changed since the fork, the layer has the
 * fork's version back, or a whiteout for what main added. Everything main's history leaves out
 * (ignored files such as `node_modules` and build outputs, the user's `.git`) shows through
 * from main, copy-on-write: a fork runs the project's tests as main does.
 *
 * The layer is kept in step incrementally: before each command the differences are asked for
 * again (git compares the two trees, skipping every subtree they share, so this costs what
 * differs) and only the entries that changed are rewritten. Only the host writes the layer; it
 * is a lower layer, which no program can write.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { HostIdentity } from '../../bubblewrap/jail-identity.ts'
import type { WorkspaceTree } from '../../workspace/workspace-tree.ts'
import type { ForkKeep } from './fork-keep.ts'

/** A file of the fork where it differs from main (the blob's id, for telling versions apart). */
export interface ForkEntry {
  readonly kind: 'file' | 'executable' | 'symlink'
  readonly oid: string
}

/** One path where the fork's files differ from main's. */
export interface ForkDifference {
  readonly path: string
  /** The fork's file there; undefined where main has a file the fork does not. */
  readonly fork: ForkEntry | undefined
}

/** What a fork's layer is built from: main's folder and the fork's differences from it. */
export interface ForkBelow {
  /** Main's folder: the lowest layer. */
  readonly root: string
  /** Where the fork's files differ from main's files now. */
  differences(): Promise<readonly ForkDifference[]>
  /** A blob's bytes, by id. */
  blob(oid: string): Promise<Uint8Array>
  /**
   * Where the fork keeps what its commands wrote that is not its files (git's, ignored ones)
   * across restarts (fork-keep.ts); without it they last as long as the jail.
   */
  readonly keep?: ForkKeep
}

/** How many blobs are asked for at once while a layer is built. */
const BLOB_BATCH = 256

/** What the layer holds at one path: the fork's file, or a whiteout. */
type LayerMark = ForkEntry | { readonly kind: 'whiteout' }

/** One build of the layer: a folder, what it holds, and how many overlays read it now. */
interface Generation {
  readonly folder: string
  readonly marks: Map<string, LayerMark>
  users: number
  retired: boolean
}

/** The layer of one fork, kept in step with the fork and main; see the module comment. */
export class ForkLayer {
  readonly #root: string
  readonly #below: ForkBelow
  /** Paths the last update could not make, with why. */
  readonly #leftOut = new Map<string, string>()
  /** Left-out paths already reported (until they are shown again). */
  readonly #reported = new Set<string>()
  readonly #fork: WorkspaceTree
  readonly #owner: HostIdentity | undefined
  readonly #whiteout: (paths: readonly string[]) => Promise<void>
  readonly #rootMode: number
  #count = 0
  #current: Generation

  constructor(options: {
    /** The layer's folder: made here, written only by the host. */
    folder: string
    below: ForkBelow
    /** The fork's files, to tell a folder the fork deleted from one it keeps. */
    fork: WorkspaceTree
    /** Who the layer's entries belong to (the jail's user, for a root caller). */
    owner?: HostIdentity
    /** Makes whiteouts (the layer host: Node cannot make a device). */
    whiteout: (paths: readonly string[]) => Promise<void>
    /** The workspace folder's bits, for the layer's root (the overlay's root, read-only). */
    rootMode: number
  }) {
    this.#root = options.folder
    this.#below = options.below
    this.#fork = options.fork
    this.#owner = options.owner
    this.#whiteout = options.whiteout
    this.#rootMode = options.rootMode
    fs.mkdirSync(this.#root, { mode: 0o711 })
    this.#current = this.#generation()
  }

  /**
   * The layer's folder for one overlay, until `release`. While an overlay reads a build (a
   * background job's), it is never changed: the next update builds a new one beside it, since
   * a lower layer that changes under a mounted overlay shows its programs a broken view.
   */
  lease(): { readonly folder: string; readonly release: () => void } {
    const generation = this.#current
    generation.users += 1
    let released = false
    return {
      folder: generation.folder,
      release: () => {
        if (released) return
        released = true
        generation.users -= 1
        if (generation.retired && generation.users === 0) removeFolder(generation.folder)
      },
    }
  }

  /** The folder the next {@link lease} gives: a layer mounted earlier reads it still if equal. */
  get folder(): string {
    return this.#current.folder
  }

  /** Brings the layer in step with the fork and main: rewrites only what changed since. */
  async update(): Promise<void> {
    const wanted = await this.#wanted()
    let generation = this.#current
    const stale = [...generation.marks].filter(
      ([relative, mark]) => !same(mark, wanted.get(relative)),
    )
    const missing = [...wanted].filter(
      ([relative, mark]) => !same(generation.marks.get(relative), mark),
    )
    if (stale.length === 0 && missing.length === 0) return
    if (generation.users > 0) {
      generation.retired = true
      generation = this.#generation()
      this.#current = generation
    }
    const folder = generation.folder
    // Deepest first, so a folder emptied by the removals can go too.
    for (const [relative] of stale.sort(([a], [b]) => b.length - a.length)) {
      if (!generation.marks.has(relative)) continue
      fs.rmSync(path.join(folder, relative), { recursive: true, force: true })
      generation.marks.delete(relative)
      removeEmptyFolders(folder, path.posix.dirname(relative))
    }
    const whiteouts: string[] = []
    const todo = [...wanted].filter(
      ([relative, mark]) => !same(generation.marks.get(relative), mark),
    )
    // The blobs are asked for a batch at a time: the history's reader answers them in a stream.
    for (let start = 0; start < todo.length; start += BLOB_BATCH) {
      const batch = todo.slice(start, start + BLOB_BATCH)
      const contents = await Promise.all(
        batch.map(([, mark]) =>
          mark.kind === 'whiteout'
            ? Promise.resolve(undefined)
            : this.#below.blob(mark.oid).catch(() => undefined),
        ),
      )
      for (const [index, [relative, mark]] of batch.entries()) {
        try {
          const target = await this.#make(folder, relative, mark, contents[index])
          if (target !== undefined) whiteouts.push(target)
          generation.marks.set(relative, mark)
        } catch (error) {
          // A name the host cannot make (too long for a path here), or a blob gone: left out of
          // the programs' view, and the next command says so once; the fork's file tools still
          // have it. Tried at the next update.
          this.#leaveOut(relative, error)
        }
      }
    }
    await this.#whiteout(whiteouts).catch(async () => {
      // One by one, so one name the host cannot make does not hide the rest.
      for (const target of whiteouts)
        await this.#whiteout([target]).catch((error: unknown) =>
          this.#leaveOut(path.relative(folder, target), error),
        )
    })
  }

  /**
   * The fork's paths left out of the programs' view since the last call (each once, while it
   * stays left out), with why.
   */
  takeLeftOut(): { path: string; reason: string }[] {
    const news = [...this.#leftOut].filter(([relative]) => !this.#reported.has(relative))
    for (const [relative] of news) this.#reported.add(relative)
    // A path shown again may be reported again if it is ever left out later.
    for (const relative of this.#reported)
      if (!this.#leftOut.has(relative)) this.#reported.delete(relative)
    this.#leftOut.clear()
    return news.map(([relative, reason]) => ({ path: relative, reason }))
  }

  #leaveOut(relative: string, error: unknown): void {
    const code = (error as NodeJS.ErrnoException | undefined)?.code
    this.#leftOut.set(
      relative,
      code === 'ENAMETOOLONG'
        ? "its name is too long for the host's file system, so programs cannot see it; eitri's file tools still read and write it in this fork"
        : code === undefined
          ? "its content could not be read from eitri's history, so programs cannot see it; eitri's file tools may still read it"
          : `it could not be made for the jail (${code}), so programs cannot see it; eitri's file tools still read and write it in this fork`,
    )
  }

  /** Ends the layer: every build goes. */
  close(): void {
    removeFolder(this.#root)
  }

  /** Makes one entry; answers its path when it is a whiteout, which the layer host makes. */
  async #make(
    folder: string,
    relative: string,
    mark: LayerMark,
    content: Uint8Array | undefined,
  ): Promise<string | undefined> {
    if (mark.kind !== 'whiteout' && content === undefined) throw new Error('no content')
    this.#makeFolders(folder, path.posix.dirname(relative))
    const target = path.join(folder, relative)
    if (mark.kind === 'whiteout') return target
    if (mark.kind === 'symlink') {
      fs.symlinkSync(Buffer.from(content as Uint8Array).toString('utf8'), target)
      this.#own(target)
      return undefined
    }
    // `wx`: a new file, never through whatever may be at its name.
    fs.writeFileSync(target, content as Uint8Array, {
      flag: 'wx',
      mode: mark.kind === 'executable' ? 0o755 : 0o644,
    })
    // The write-back tells a file copied up unchanged by its time: the fork's time.
    const modified =
      this.#fork.modifiedMs === undefined
        ? (await this.#fork.stat(relative))?.modifiedMs
        : await this.#fork.modifiedMs(relative)
    if (modified !== undefined) fs.utimesSync(target, modified / 1000, modified / 1000)
    this.#own(target)
    return undefined
  }

  #generation(): Generation {
    const folder = path.join(this.#root, String(++this.#count))
    fs.mkdirSync(folder, { mode: 0o700 })
    fs.chmodSync(folder, this.#rootMode & 0o777)
    this.#own(folder)
    return { folder, marks: new Map(), users: 0, retired: false }
  }

  /**
   * What the layer should hold: the fork's file where it differs; where main has a file the
   * fork does not, a whiteout on the outermost folder the fork lacks (so main's ignored files
   * there go from view too, as they are gone from the fork).
   */
  async #wanted(): Promise<Map<string, LayerMark>> {
    const wanted = new Map<string, LayerMark>()
    const hidden: string[] = []
    for (const difference of await this.#below.differences()) {
      // Paths come from eitri's own trees; one that could climb out of the layer is skipped.
      if (!isPlainPath(difference.path)) continue
      if (difference.fork !== undefined) {
        wanted.set(difference.path, difference.fork)
        continue
      }
      const outermost = await this.#outermostMissing(difference.path)
      if (outermost !== undefined) hidden.push(outermost)
    }
    const whiteouts = new Set(hidden)
    for (const relative of whiteouts) wanted.set(relative, { kind: 'whiteout' })
    // Nothing below a whiteout: the overlay would not look.
    for (const relative of wanted.keys()) {
      for (
        let folder = path.posix.dirname(relative);
        folder !== '.';
        folder = path.posix.dirname(folder)
      ) {
        if (!whiteouts.has(folder)) continue
        wanted.delete(relative)
        break
      }
    }
    return wanted
  }

  /**
   * The outermost of `relative` and the folders above it that the fork lacks; undefined when
   * the fork's own entry there (a folder) or above it (a file or link) hides it already.
   */
  async #outermostMissing(relative: string): Promise<string | undefined> {
    // A folder of the fork's where main has a file: the layer's folder hides the file.
    if ((await this.#fork.kind(relative)) === 'directory') return undefined
    let outermost = relative
    for (let folder = path.posix.dirname(relative); folder !== '.';) {
      const kind = await this.#fork.kind(folder)
      if (kind === 'directory') return outermost
      if (kind !== undefined) return undefined
      outermost = folder
      folder = path.posix.dirname(folder)
    }
    return outermost
  }

  /** Makes the folders above an entry, each with the bits of main's folder there. */
  #makeFolders(folder: string, relative: string): void {
    if (relative === '.' || relative === '') return
    const target = path.join(folder, relative)
    const existing = fs.lstatSync(target, { throwIfNoEntry: false })
    if (existing?.isDirectory() === true) return
    this.#makeFolders(folder, path.posix.dirname(relative))
    if (existing !== undefined) fs.rmSync(target, { recursive: true, force: true })
    const main = fs.lstatSync(path.join(this.#below.root, relative), { throwIfNoEntry: false })
    fs.mkdirSync(target, { mode: 0o700 })
    fs.chmodSync(target, main?.isDirectory() === true ? main.mode & 0o777 : 0o755)
    this.#own(target)
  }

  #own(target: string): void {
    if (this.#owner !== undefined) fs.lchownSync(target, this.#owner.uid, this.#owner.gid)
  }
}

/** Removes the now empty folders at and above `relative`, up to the layer's root. */
function removeEmptyFolders(folder: string, relative: string): void {
  for (let at = relative; at !== '.' && at !== ''; at = path.posix.dirname(at)) {
    try {
      fs.rmdirSync(path.join(folder, at))
    } catch {
      return // not empty, or gone
    }
  }
}

function removeFolder(folder: string): void {
  fs.rmSync(folder, { recursive: true, force: true })
}

function isPlainPath(relative: string): boolean {
  return relative.split('/').every((part) => part !== '' && part !== '.' && part !== '..')
}

function same(a: LayerMark | undefined, b: LayerMark | undefined): boolean {
  if (a === undefined || b === undefined) return a === b
  if (a.kind === 'whiteout' || b.kind === 'whiteout') return a.kind === b.kind
  return a.kind === b.kind && a.oid === b.oid
}
