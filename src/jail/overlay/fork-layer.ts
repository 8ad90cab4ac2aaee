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
}

/** What the layer holds at one path: the fork's file, or a whiteout. */
type LayerMark = ForkEntry | { readonly kind: 'whiteout' }

/** The layer of one fork, kept in step with the fork and main; see the module comment. */
export class ForkLayer {
  readonly #folder: string
  readonly #below: ForkBelow
  readonly #fork: WorkspaceTree
  readonly #owner: HostIdentity | undefined
  readonly #whiteout: (paths: readonly string[]) => Promise<void>
  /** What the layer holds now, by path. */
  readonly #marks = new Map<string, LayerMark>()

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
    this.#folder = options.folder
    this.#below = options.below
    this.#fork = options.fork
    this.#owner = options.owner
    this.#whiteout = options.whiteout
    fs.mkdirSync(this.#folder, { mode: 0o700 })
    fs.chmodSync(this.#folder, options.rootMode & 0o777)
    this.#own(this.#folder)
  }

  /** The layer's folder, a lower layer of each of the fork's overlays. */
  get folder(): string {
    return this.#folder
  }

  /** Brings the layer in step with the fork and main: rewrites only what changed since. */
  async update(): Promise<void> {
    const wanted = await this.#wanted()
    const stale = [...this.#marks].filter(([relative, mark]) => !same(mark, wanted.get(relative)))
    // Deepest first, so a folder emptied by the removals can go too.
    for (const [relative] of stale.sort(([a], [b]) => b.length - a.length)) {
      fs.rmSync(path.join(this.#folder, relative), { recursive: true, force: true })
      this.#marks.delete(relative)
      this.#removeEmptyFolders(path.posix.dirname(relative))
    }
    const whiteouts: string[] = []
    for (const [relative, mark] of wanted) {
      if (same(this.#marks.get(relative), mark)) continue
      this.#makeFolders(path.posix.dirname(relative))
      const target = path.join(this.#folder, relative)
      if (mark.kind === 'whiteout') whiteouts.push(target)
      else if (mark.kind === 'symlink') {
        fs.symlinkSync(Buffer.from(await this.#below.blob(mark.oid)).toString('utf8'), target)
        this.#own(target)
      } else {
        // `wx`: a new file, never through whatever may be at its name.
        fs.writeFileSync(target, await this.#below.blob(mark.oid), {
          flag: 'wx',
          mode: mark.kind === 'executable' ? 0o755 : 0o644,
        })
        // The write-back tells a file copied up unchanged by its time: the fork's time.
        const stat = await this.#fork.stat(relative)
        if (stat !== undefined)
          fs.utimesSync(target, stat.modifiedMs / 1000, stat.modifiedMs / 1000)
        this.#own(target)
      }
      this.#marks.set(relative, mark)
    }
    await this.#whiteout(whiteouts)
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
   * The outermost of `relative` and the folders above it that the fork lacks; undefined when a
   * file or link of the fork's above it hides it already.
   */
  async #outermostMissing(relative: string): Promise<string | undefined> {
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
  #makeFolders(relative: string): void {
    if (relative === '.' || relative === '') return
    const target = path.join(this.#folder, relative)
    const existing = fs.lstatSync(target, { throwIfNoEntry: false })
    if (existing?.isDirectory() === true) return
    this.#makeFolders(path.posix.dirname(relative))
    if (existing !== undefined) fs.rmSync(target, { recursive: true, force: true })
    const main = fs.lstatSync(path.join(this.#below.root, relative), { throwIfNoEntry: false })
    fs.mkdirSync(target, { mode: 0o700 })
    fs.chmodSync(target, main?.isDirectory() === true ? main.mode & 0o777 : 0o755)
    this.#own(target)
  }

  #removeEmptyFolders(relative: string): void {
    for (
      let folder = relative;
      folder !== '.' && folder !== '';
      folder = path.posix.dirname(folder)
    ) {
      try {
        fs.rmdirSync(path.join(this.#folder, folder))
      } catch {
        return // not empty, or gone
      }
    }
  }

  #own(target: string): void {
    if (this.#owner !== undefined) fs.lchownSync(target, this.#owner.uid, this.#owner.gid)
  }
}

function isPlainPath(relative: string): boolean {
  return relative.split('/').every((part) => part !== '' && part !== '.' && part !== '..')
}

function same(a: LayerMark | undefined, b: LayerMark | undefined): boolean {
  if (a === undefined || b === undefined) return a === b
  if (a.kind === 'whiteout' || b.kind === 'whiteout') return a.kind === b.kind
  return a.kind === b.kind && a.oid === b.oid
}
