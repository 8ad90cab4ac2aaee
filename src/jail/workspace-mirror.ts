/**
 * @module jail/workspace-mirror
 * A copy of the workspace owned by the jail's user, which jailed programs work on: that user
 * may not be able to write (or even read) the workspace itself (a root caller's jails run as
 * `nobody`), and mounts alone cannot keep protected paths out at any depth. Before each run the
 * mirror takes what changed on the host; after it, what the program changed goes back to the
 * host through the workspace view, so the one path policy judges every file: protected and
 * private paths never reach the host, at any depth, and links may not point outside.
 * A background job may change the mirror while it is synced, so every mirror path is reached
 * through pinned folders (pinned-folder.ts): no link the program plants is ever followed.
 * What the workspace's owner may not read (a root caller's tree refuses it, any other caller's
 * kernel does) never enters the mirror, which the jail's user owns whole (decision 0060).
 */
import fs from 'node:fs'
import path from 'node:path'
import { EitriError } from '../errors/eitri-error.ts'
import {
  DEFAULT_WRITE_BACK_LIMITS,
  type ProposedChange,
  type WriteBackLimits,
} from '../access/write-back/plan-write-back.ts'
import type { EntryType, WorkspaceView } from '../ports/workspace-view.ts'
import type { DirectoryEntry, WorkspaceTree } from '../workspace/workspace-tree.ts'
import type { HostIdentity } from '../bubblewrap/jail-identity.ts'
import { MAX_PATH_BYTES } from './overlay/settle-upper-layer.ts'
import { atPinned, removePinned, walkPinned } from './pinned-folder.ts'
import { writeBack, type SyncReport } from './write-back.ts'

/** A folder of the mirror opened without following a final link. */
const FOLDER_FLAGS = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW

/** Files copied into the mirror at once: their contents are read concurrently. */
const PARALLEL_COPIES = 64
/** Numbers the staging names of copies into the mirror, unique within this process. */
let stagingCount = 0
/** Bytes of one file held at a time while it is copied from a host folder into the mirror. */
const COPY_CHUNK_BYTES = 1024 * 1024

export type { SyncReport } from './write-back.ts'

interface Known {
  type: EntryType
  /** Size, mtime, mode (and link target) when last seen on the host and in the mirror. */
  host: string
  mirror: string
}

/** Keeps one mirror folder in step with one workspace. */
export class WorkspaceMirror {
  readonly root: string
  readonly #tree: WorkspaceTree
  readonly #view: WorkspaceView
  readonly #owner: HostIdentity
  readonly #isPrivate: (relativePath: string) => boolean
  readonly #known = new Map<string, Known>()
  readonly #limits: WriteBackLimits
  /** False until the first sync filled the mirror. */
  #populated = false

  constructor(options: {
    root: string
    tree: WorkspaceTree
    view: WorkspaceView
    owner: HostIdentity
    isPrivate: (relativePath: string) => boolean
    /** Bounds on what one command brings back. @default 64 MiB a file, 256 MiB a command */
    limits?: WriteBackLimits
  }) {
    this.#limits = options.limits ?? DEFAULT_WRITE_BACK_LIMITS
    this.root = options.root
    this.#tree = options.tree
    this.#view = options.view
    this.#owner = options.owner
    this.#isPrivate = options.isPrivate
  }

  /** Brings what changed on the host since the last sync into the mirror. */
  async syncIn(): Promise<void> {
    const seen = new Set<string>()
    const files: [string, EntryType, string][] = []
    const copy = async (
      relative: string,
      type: EntryType,
      hostSignature: string,
    ): Promise<void> => {
      try {
        if (this.#populated) await this.#copyIn(relative, type)
        else await this.#copyInFresh(relative, type)
      } catch (error) {
        if (!isRefused(error)) throw error
        // Unreadable to the owner: not in the mirror (a copy made while it was readable goes).
        removePinned(this.root, relative)
        this.#known.delete(relative)
        return
      }
      this.#known.set(relative, {
        type,
        host: hostSignature,
        mirror: this.#populated ? this.#mirrorSignature(relative) : this.#freshSignature(relative),
      })
    }
    for await (const [relative, type] of walkHost(this.#tree, this.#isPrivate)) {
      const hostSignature = await this.#hostSignature(relative)
      // Not seen, so a copy made while it was readable goes below.
      if (hostSignature === UNREADABLE) continue
      seen.add(relative)
      if (hostSignature === 'missing') continue
      const known = this.#known.get(relative)
      if (known !== undefined && known.type === type && known.host === hostSignature) continue
      // Folders and links in walk order (parents first); file contents are fetched in parallel.
      if (type === 'file') files.push([relative, type, hostSignature])
      else await copy(relative, type, hostSignature)
    }
    for (let index = 0; index < files.length; index += PARALLEL_COPIES) {
      await Promise.all(
        files
          .slice(index, index + PARALLEL_COPIES)
          .map(([relative, type, hostSignature]) => copy(relative, type, hostSignature)),
      )
    }
    for (const relative of [...this.#known.keys()].sort().reverse()) {
      if (seen.has(relative)) continue
      removePinned(this.root, relative)
      this.#known.delete(relative)
    }
    this.#populated = true
  }

  /**
   * The first copy into a new mirror: no program has run in it yet, so nothing in it can be a
   * planted link, and plain paths are safe (and much faster than pinned folders).
   */
  async #copyInFresh(relative: string, type: EntryType): Promise<void> {
    const stat = await this.#tree.stat(relative)
    if (stat === undefined || type === 'other') return
    const target = path.join(this.root, relative)
    const { uid, gid } = this.#owner
    if (type === 'directory') {
      fs.mkdirSync(target, { recursive: true })
      fs.chmodSync(target, stat.mode | 0o700)
      fs.chownSync(target, uid, gid)
    } else if (type === 'symlink') {
      fs.symlinkSync(await this.#tree.readlink(relative), target)
      fs.lchownSync(target, uid, gid)
    } else {
      const descriptor = fs.openSync(target, 'w', 0o600)
      try {
        await copyContent(this.#tree, relative, descriptor)
      } finally {
        fs.closeSync(descriptor)
      }
      fs.chmodSync(target, stat.mode | 0o600)
      fs.utimesSync(target, stat.modifiedMs / 1000, stat.modifiedMs / 1000)
      fs.chownSync(target, uid, gid)
    }
  }

  #freshSignature(relative: string): string {
    return signatureOfPath(path.join(this.root, relative)) ?? 'missing'
  }

  /**
   * Sends what the program changed in the mirror back to the host: the changes are listed,
   * judged by the one write-back plan (the path policy, permission bits, links, sizes, new
   * repositories, the history rules), and written through the workspace view.
   * `mountPoints` (placeholders the jail mounted) are the jail's own, never the program's.
   */
  async syncOut(mountPoints: ReadonlySet<string> = new Set()): Promise<SyncReport> {
    const report: SyncReport = { written: [], deleted: [], refused: [], kept: [] }
    const seen = new Set<string>()
    const entries: [string, EntryType, fs.Stats, string][] = []
    walkPinned(
      this.root,
      mountPoints,
      ({ relative, stat, target }) => {
        const type = typeOfStat(stat)
        if (type === 'other') return
        entries.push([relative, type, stat, signatureOfStat(type, stat, target)])
      },
      (display) =>
        report.refused.push({
          path: display,
          reason: 'its name is not valid UTF-8, so it cannot be named in the workspace; rename it',
        }),
    )
    // A path longer than the overlay's bound: the host's own name for it may pass PATH_MAX
    // (its folder is longer than /workspace), and it is refused as the overlay refuses it,
    // alone, never failing the whole command. Parents come first, so each refusal is the top.
    const tooLong = (relative: string): boolean => Buffer.byteLength(relative) > MAX_PATH_BYTES
    for (const [relative] of entries) {
      if (!tooLong(relative) || tooLong(path.posix.dirname(relative))) continue
      removePinned(this.root, relative)
      report.refused.push({
        path: relative,
        reason: `its path is longer than ${MAX_PATH_BYTES} bytes, so it is not written back, and nothing below it; make the tree shallower`,
      })
    }
    if (entries.some(([relative]) => tooLong(relative)))
      entries.splice(0, entries.length, ...entries.filter(([relative]) => !tooLong(relative)))
    const changes: ProposedChange[] = []
    const signatures = new Map<string, string>()
    for (const [relative, type, stat, mirrorSignature] of entries) {
      seen.add(relative)
      const known = this.#known.get(relative)
      if (known !== undefined && known.type === type && known.mirror === mirrorSignature) continue
      const hostSignature = type === 'directory' ? undefined : await this.#hostSignature(relative)
      if (hostSignature === UNREADABLE) {
        // The program made it where the owner may not write (beside or inside what the mirror
        // never held): refused, and gone from the mirror.
        report.refused.push({
          path: relative,
          reason: "the workspace's owner may not read or write it there, so it is not written back",
        })
        removePinned(this.root, relative)
        continue
      }
      if (hostSignature !== undefined && hostSignature !== (known?.host ?? 'missing')) {
        // The host changed this path while the program ran: its version wins, and the program's
        // write is reported rather than silently overwriting the person's (or a tool's) change.
        report.refused.push({
          path: relative,
          reason:
            'it changed in the workspace while the command ran; the workspace’s version was kept',
        })
        await this.#restore(relative)
        continue
      }
      signatures.set(relative, mirrorSignature)
      // Another kind of entry where the host had one (a link made a folder, a file a link):
      // the old one is removed first, so the new one is written at the name, not through it.
      if (known !== undefined && known.type !== type)
        changes.push({ path: relative, type: 'delete' })
      changes.push(
        type === 'file'
          ? { path: relative, type, mode: stat.mode & 0o7777, size: stat.size }
          : type === 'symlink'
            ? {
                path: relative,
                type,
                target: atPinned(this.root, relative, (link) => fs.readlinkSync(link)),
              }
            : { path: relative, type: 'directory' },
      )
    }
    for (const relative of [...this.#known.keys()].sort().reverse()) {
      if (seen.has(relative)) continue
      const known = this.#known.get(relative) as Known
      if ((await this.#hostSignature(relative)) !== known.host) {
        // Changed on the host meanwhile: keep the host's version, bring it back next time.
        this.#known.delete(relative)
        continue
      }
      changes.push({ path: relative, type: 'delete' })
    }
    if (changes.length === 0) return report
    const { plan, applied, failed } = await writeBack({
      source: this.root,
      changes,
      tree: this.#tree,
      view: this.#view,
      limits: this.#limits,
    })
    for (const change of applied) {
      if (change.type === 'delete') {
        report.deleted.push(change.path)
        this.#known.delete(change.path)
        continue
      }
      report.written.push(change.path)
      this.#known.set(change.path, {
        type: change.type,
        host: await this.#hostSignature(change.path),
        // As listed, before anything was read: if the program changed the file since, the next
        // sync sees a change and judges it again (what was written is what was judged).
        mirror: signatures.get(change.path) ?? this.#mirrorSignature(change.path),
      })
    }
    for (const failure of failed) {
      report.refused.push(failure)
      await this.#restore(failure.path)
    }
    // Derived files git rebuilds (a commit graph after `git gc`): not written, not a failure.
    for (const dropped of plan.dropped) {
      report.kept.push(dropped)
      await this.#restore(dropped.path)
    }
    // Parents before children: a refused folder removal comes back before what it held.
    const depth = (relative: string): number => relative.split('/').length
    for (const refused of [...plan.refused].sort((a, b) => depth(a.path) - depth(b.path))) {
      report.refused.push(refused)
      await this.#restore(refused.path)
    }
    for (const relative of plan.unchanged) {
      const change = changes.find((candidate) => candidate.path === relative)
      if (change === undefined || change.type === 'delete') continue
      this.#known.set(relative, {
        type: change.type,
        host: await this.#hostSignature(relative),
        mirror: signatures.get(relative) ?? this.#mirrorSignature(relative),
      })
    }
    // A repository made in the jail stays there: it is reported each command, never written.
    report.kept.push(...plan.kept)
    return report
  }

  /**
   * Puts the host's version of `relative` into the mirror. A background job may re-create the
   * path at any moment, so files and links are made under a fresh name in the pinned folder and
   * renamed over whatever is there: the last step replaces, it never fails on a file the
   * program made in between.
   */
  async #copyIn(relative: string, type: EntryType): Promise<void> {
    const existing = atPinned(this.root, relative, (target) =>
      fs.lstatSync(target, { throwIfNoEntry: false }),
    )
    if (existing !== undefined && (type !== 'directory' || !existing.isDirectory())) {
      removePinned(this.root, relative)
    }
    const stat = await this.#tree.stat(relative)
    if (stat === undefined || type === 'other') return
    const isFile = type === 'file'
    const linkTarget = type === 'symlink' ? await this.#tree.readlink(relative) : undefined
    const { uid, gid } = this.#owner
    const staging = `.eitri-copy-${process.pid}-${++stagingCount}`
    // Renamed over the path; if that fails (the program made a folder there), the staged copy
    // goes, so it is never taken for a file the program wrote.
    const place = (): void =>
      atPinned(this.root, relative, (target) => {
        const staged = path.posix.join(path.posix.dirname(target), staging)
        try {
          fs.renameSync(staged, target)
        } catch (error) {
          fs.rmSync(staged, { force: true })
          throw error
        }
      })
    if (linkTarget !== undefined) {
      atPinned(this.root, relative, (target) => {
        const staged = path.posix.join(path.posix.dirname(target), staging)
        fs.symlinkSync(linkTarget, staged)
        fs.lchownSync(staged, uid, gid)
      })
      place()
      return
    }
    const descriptor = atPinned(this.root, relative, (target) => {
      if (isFile) {
        return fs.openSync(
          path.posix.join(path.posix.dirname(target), staging),
          fs.constants.O_WRONLY |
            fs.constants.O_CREAT |
            fs.constants.O_EXCL |
            fs.constants.O_NOFOLLOW,
          0o600,
        )
      }
      if (fs.lstatSync(target, { throwIfNoEntry: false }) === undefined) fs.mkdirSync(target)
      return fs.openSync(target, FOLDER_FLAGS)
    })
    // Written through the descriptor opened in the pinned folder: no link is followed later.
    try {
      if (isFile) {
        await copyContent(this.#tree, relative, descriptor)
        // The host's time, not now: a program's later write then always changes it, even
        // within the kernel's coarse timestamp tick.
        fs.futimesSync(descriptor, stat.modifiedMs / 1000, stat.modifiedMs / 1000)
      }
      fs.fchmodSync(descriptor, stat.mode | (isFile ? 0o600 : 0o700))
      fs.fchownSync(descriptor, uid, gid)
    } catch (error) {
      // A staged copy left behind would pass for a file the program wrote.
      if (isFile)
        atPinned(this.root, relative, (target) =>
          fs.rmSync(path.posix.join(path.posix.dirname(target), staging), { force: true }),
        )
      throw error
    } finally {
      fs.closeSync(descriptor)
    }
    if (isFile) place()
  }

  /**
   * Puts the host's version of a path back into the mirror after a refused change. A program
   * still running may race it (make a folder where a file goes); then the path is forgotten:
   * the next sync into the mirror copies it again, and the next sync out judges it anew.
   */
  async #restore(relative: string): Promise<void> {
    try {
      const stat = await this.#tree.stat(relative)
      removePinned(this.root, relative)
      if (stat !== undefined && !this.#isPrivate(relative)) {
        await this.#copyIn(relative, stat.type)
        this.#known.set(relative, {
          type: stat.type,
          host: await this.#hostSignature(relative),
          mirror: this.#mirrorSignature(relative),
        })
        return
      }
    } catch {
      // Forgotten below: nothing of the program's version reaches the host unjudged.
    }
    this.#known.delete(relative)
  }

  #mirrorSignature(relative: string): string {
    try {
      return atPinned(this.root, relative, (pinned) => signatureOfPath(pinned) ?? 'missing')
    } catch (error) {
      // A folder on the way became a link: nothing there is the mirror's.
      if (EitriError.isInstance(error)) return 'missing'
      throw error
    }
  }

  /**
   * What the line holds at a path: a content id where the tree has one, else size and time;
   * {@link UNREADABLE} below a folder the workspace's owner may not enter.
   */
  async #hostSignature(relative: string): Promise<string> {
    const known = await this.#tree.signature?.(relative)
    if (known !== undefined) return known
    let stat
    try {
      stat = await this.#tree.stat(relative)
    } catch (error) {
      if (isRefused(error)) return UNREADABLE
      throw error
    }
    if (stat === undefined) return 'missing'
    const target = stat.type === 'symlink' ? await this.#tree.readlink(relative) : ''
    return signature(stat.type, stat, target)
  }
}

/** The kind of a mirror entry from its lstat. */
function typeOfStat(stat: fs.Stats): EntryType {
  return stat.isSymbolicLink()
    ? 'symlink'
    : stat.isDirectory()
      ? 'directory'
      : stat.isFile()
        ? 'file'
        : 'other'
}

/** The signature of what is at a host path now (never following it); undefined when missing. */
function signatureOfPath(hostPath: string): string | undefined {
  const stat = fs.lstatSync(hostPath, { throwIfNoEntry: false })
  if (stat === undefined) return undefined
  const type = typeOfStat(stat)
  return signatureOfStat(type, stat, type === 'symlink' ? fs.readlinkSync(hostPath) : '')
}

function signatureOfStat(type: EntryType, stat: fs.Stats, target: string): string {
  return signature(
    type,
    { size: stat.size, modifiedMs: stat.mtimeMs, mode: stat.mode & 0o7777 },
    target,
  )
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

/** The host signature of a path below a folder the workspace's owner may not enter. */
const UNREADABLE = 'unreadable'

/** Whether an error is the refusal of a path the workspace's owner may not reach. */
function isRefused(error: unknown): boolean {
  return EitriError.isInstance(error) && error.code === 'permission_denied'
}

/**
 * Every entry of the line, parents before children, `.git` included. A folder the workspace's
 * owner may not list is left out with all it holds: it is listed before it is named.
 */
async function* walkHost(
  tree: WorkspaceTree,
  isPrivate: (relative: string) => boolean,
): AsyncGenerator<[string, EntryType]> {
  const folders: [string, readonly DirectoryEntry[]][] = [['', await tree.list('')]]
  while (folders.length > 0) {
    const [folder, entries] = folders.pop() as [string, readonly DirectoryEntry[]]
    const below: [string, readonly DirectoryEntry[]][] = []
    for (const entry of entries) {
      const relative = folder === '' ? entry.name : `${folder}/${entry.name}`
      if (isPrivate(relative) || entry.type === 'other') continue
      if (entry.type === 'directory') {
        let inside: readonly DirectoryEntry[]
        try {
          inside = await tree.list(relative)
        } catch (error) {
          if (isRefused(error)) continue
          throw error
        }
        below.push([relative, inside])
      }
      yield [relative, entry.type]
    }
    folders.push(...below.reverse())
  }
}

/**
 * Writes a file of `tree` to `descriptor`. From a host folder it goes a chunk at a time, so a
 * large workspace file (64 copied at once) never sits whole in the server's memory; a fork's
 * file comes whole from the history (bounded by the fork's quota).
 */
async function copyContent(
  tree: WorkspaceTree,
  relative: string,
  descriptor: number,
): Promise<void> {
  if (tree.root === undefined) {
    fs.writeFileSync(descriptor, await tree.readFile(relative))
    return
  }
  for (let offset = 0; ; offset += COPY_CHUNK_BYTES) {
    const chunk = await tree.readFile(relative, { range: { offset, length: COPY_CHUNK_BYTES } })
    for (let written = 0; written < chunk.length;) {
      written += fs.writeSync(descriptor, chunk, written, chunk.length - written, offset + written)
    }
    if (chunk.length < COPY_CHUNK_BYTES) return
  }
}
