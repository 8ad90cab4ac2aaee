/**
 * @module jail/workspace-mirror
 * A copy of the workspace owned by the jail's user, for when that user cannot write (or even
 * read) the workspace itself: a root caller's jails run as `nobody`. Before each run the
 * mirror takes what changed on the host; after it, what the program changed goes back to the
 * host through the workspace view, so the one path policy judges every file: protected and
 * private paths never reach the host, at any depth, and links may not point outside.
 */
import fs from 'node:fs'
import path from 'node:path'
import { EitriError } from '../errors/eitri-error.ts'
import type { EntryType, WorkspaceView } from '../tool/workspace-view.ts'
import type { DirectoryTree } from '../workspace/directory-tree.ts'
import type { HostIdentity } from './jail-identity.ts'

/** What a sync back to the host did. */
export interface SyncReport {
  readonly written: string[]
  readonly deleted: string[]
  /** Changes the policy refused; the mirror is restored to the host's version of each. */
  readonly refused: { path: string; reason: string }[]
}

interface Known {
  type: EntryType
  /** Size, mtime, mode (and link target) when last seen on the host and in the mirror. */
  host: string
  mirror: string
}

/** Keeps one mirror folder in step with one workspace. */
export class WorkspaceMirror {
  readonly root: string
  readonly #tree: DirectoryTree
  readonly #view: WorkspaceView
  readonly #owner: HostIdentity
  readonly #isPrivate: (relativePath: string) => boolean
  readonly #known = new Map<string, Known>()

  constructor(options: {
    root: string
    tree: DirectoryTree
    view: WorkspaceView
    owner: HostIdentity
    isPrivate: (relativePath: string) => boolean
  }) {
    this.root = options.root
    this.#tree = options.tree
    this.#view = options.view
    this.#owner = options.owner
    this.#isPrivate = options.isPrivate
  }

  /** Brings what changed on the host since the last sync into the mirror. */
  async syncIn(): Promise<void> {
    const seen = new Set<string>()
    for (const [relative, type] of walkHost(this.#tree, this.#isPrivate)) {
      seen.add(relative)
      const stat = this.#tree.statNow(relative)
      if (stat === undefined) continue
      const hostSignature = signature(
        type,
        stat,
        type === 'symlink' ? await this.#tree.readlink(relative) : '',
      )
      const known = this.#known.get(relative)
      if (known !== undefined && known.type === type && known.host === hostSignature) continue
      await this.#copyIn(relative, type)
      this.#known.set(relative, {
        type,
        host: hostSignature,
        mirror: this.#mirrorSignature(relative),
      })
    }
    for (const relative of [...this.#known.keys()].sort().reverse()) {
      if (seen.has(relative)) continue
      fs.rmSync(this.#mirrorPath(relative), { recursive: true, force: true })
      this.#known.delete(relative)
    }
  }

  /**
   * Sends what the program changed in the mirror back to the host, through the policy.
   * `mountPoints` (placeholders the jail mounted) are the jail's own, never the program's.
   */
  async syncOut(mountPoints: ReadonlySet<string> = new Set()): Promise<SyncReport> {
    const report: SyncReport = { written: [], deleted: [], refused: [] }
    const seen = new Set<string>()
    for (const [relative, type] of walkMirror(this.root, mountPoints)) {
      seen.add(relative)
      const mirrorSignature = this.#mirrorSignature(relative)
      const known = this.#known.get(relative)
      if (known !== undefined && known.type === type && known.mirror === mirrorSignature) continue
      try {
        await this.#copyOut(relative, type)
        report.written.push(relative)
      } catch (error) {
        report.refused.push({ path: relative, reason: reasonOf(error) })
        await this.#restore(relative)
        continue
      }
      this.#known.set(relative, {
        type,
        host: this.#hostSignature(relative),
        mirror: this.#mirrorSignature(relative),
      })
    }
    for (const relative of [...this.#known.keys()].sort().reverse()) {
      if (seen.has(relative)) continue
      const known = this.#known.get(relative) as Known
      if (this.#hostSignature(relative) !== known.host) {
        // Changed on the host meanwhile: keep the host's version, bring it back next time.
        this.#known.delete(relative)
        continue
      }
      try {
        await this.#view.remove(relative)
        report.deleted.push(relative)
        this.#known.delete(relative)
      } catch (error) {
        report.refused.push({ path: relative, reason: reasonOf(error) })
        await this.#restore(relative)
      }
    }
    return report
  }

  async #copyIn(relative: string, type: EntryType): Promise<void> {
    const target = this.#mirrorPath(relative)
    const existing = fs.lstatSync(target, { throwIfNoEntry: false })
    if (existing !== undefined && (type !== 'directory' || !existing.isDirectory())) {
      fs.rmSync(target, { recursive: true, force: true })
    }
    const stat = this.#tree.statNow(relative)
    if (stat === undefined) return
    if (type === 'directory') {
      fs.mkdirSync(target, { recursive: true })
      fs.chmodSync(target, stat.mode | 0o700)
    } else if (type === 'symlink') {
      fs.symlinkSync(await this.#tree.readlink(relative), target)
    } else if (type === 'file') {
      fs.writeFileSync(target, await this.#tree.readFile(relative), { mode: 0o600 })
      fs.chmodSync(target, stat.mode | 0o600)
      // The host's time, not now: a program's later write then always changes it, even within
      // the kernel's coarse timestamp tick.
      fs.utimesSync(target, stat.modifiedMs / 1000, stat.modifiedMs / 1000)
    } else {
      return
    }
    fs.lchownSync(target, this.#owner.uid, this.#owner.gid)
  }

  async #copyOut(relative: string, type: EntryType): Promise<void> {
    const source = this.#mirrorPath(relative)
    if (type === 'directory') {
      await this.#view.makeFolder(relative)
    } else if (type === 'symlink') {
      await this.#view.createSymlink(relative, fs.readlinkSync(source))
    } else if (type === 'file') {
      const mode = fs.lstatSync(source).mode & 0o7777
      await this.#view.writeFile(relative, fs.readFileSync(source), { mode })
    }
  }

  /** Puts the host's version of a path back into the mirror after a refused change. */
  async #restore(relative: string): Promise<void> {
    fs.rmSync(this.#mirrorPath(relative), { recursive: true, force: true })
    const stat = this.#tree.statNow(relative)
    if (stat === undefined || this.#isPrivate(relative)) {
      this.#known.delete(relative)
      return
    }
    await this.#copyIn(relative, stat.type)
    this.#known.set(relative, {
      type: stat.type,
      host: this.#hostSignature(relative),
      mirror: this.#mirrorSignature(relative),
    })
  }

  #mirrorPath(relative: string): string {
    return path.join(this.root, relative)
  }

  #mirrorSignature(relative: string): string {
    const stat = fs.lstatSync(this.#mirrorPath(relative), { throwIfNoEntry: false })
    if (stat === undefined) return 'missing'
    const type: EntryType = stat.isSymbolicLink()
      ? 'symlink'
      : stat.isDirectory()
        ? 'directory'
        : stat.isFile()
          ? 'file'
          : 'other'
    const target = type === 'symlink' ? fs.readlinkSync(this.#mirrorPath(relative)) : ''
    return signature(
      type,
      { size: stat.size, modifiedMs: stat.mtimeMs, mode: stat.mode & 0o7777 },
      target,
    )
  }

  #hostSignature(relative: string): string {
    const stat = this.#tree.statNow(relative)
    if (stat === undefined) return 'missing'
    const target = stat.type === 'symlink' ? fs.readlinkSync(this.#tree.hostPath(relative)) : ''
    return signature(stat.type, stat, target)
  }
}

function reasonOf(error: unknown): string {
  if (EitriError.isInstance(error)) return error.message
  return `could not be written back: ${(error as NodeJS.ErrnoException).code ?? String(error)}`
}

function signature(
  type: EntryType,
  stat: { size: number; modifiedMs: number; mode: number },
  target: string,
): string {
  // A folder's size and time change whenever an entry does; its own content is its entries.
  return type === 'directory'
    ? `d:${stat.mode}`
    : `${type}:${stat.size}:${stat.modifiedMs}:${stat.mode}:${target}`
}

/** Every entry of the host workspace, parents before children, `.git` included. */
function* walkHost(
  tree: DirectoryTree,
  isPrivate: (relative: string) => boolean,
): Generator<[string, EntryType]> {
  const folders = ['']
  while (folders.length > 0) {
    const folder = folders.pop() as string
    for (const entry of fs.readdirSync(tree.hostPath(folder), { withFileTypes: true })) {
      const relative = folder === '' ? entry.name : `${folder}/${entry.name}`
      if (isPrivate(relative)) continue
      const type: EntryType = entry.isSymbolicLink()
        ? 'symlink'
        : entry.isDirectory()
          ? 'directory'
          : entry.isFile()
            ? 'file'
            : 'other'
      if (type === 'other') continue
      yield [relative, type]
      if (type === 'directory') folders.push(relative)
    }
  }
}

/** Every entry of the mirror but the skipped ones, parents before children. */
function* walkMirror(root: string, skip: ReadonlySet<string>): Generator<[string, EntryType]> {
  const folders = ['']
  while (folders.length > 0) {
    const folder = folders.pop() as string
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(path.join(root, folder), { withFileTypes: true })
    } catch {
      continue // removed while we walked
    }
    for (const entry of entries) {
      const relative = folder === '' ? entry.name : `${folder}/${entry.name}`
      if (skip.has(relative)) continue
      const type: EntryType = entry.isSymbolicLink()
        ? 'symlink'
        : entry.isDirectory()
          ? 'directory'
          : entry.isFile()
            ? 'file'
            : 'other'
      if (type === 'other') continue
      yield [relative, type]
      if (type === 'directory') folders.push(relative)
    }
  }
}
