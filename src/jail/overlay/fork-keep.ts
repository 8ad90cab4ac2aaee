/**
 * @module jail/overlay/fork-keep
 * Where a fork keeps what its commands wrote that is not the fork's files (git's own files, a
 * commit in the fork's view of `.git`; what the fork's `.gitignore` files ignore, such as an
 * installed `node_modules` or a built `dist/`): a folder of the fork's under eitri's state
 * folder (`forks/ID/jail`), so a restarted eitri finds it again, until the fork is merged or
 * discarded.
 *
 * The folder holds the kept layer (`kept/`, a lower layer of the fork's overlays), the list of
 * the paths kept there (`kept.json`), the upper layers of the commands running now
 * (`layers-PID.START/`: the same file system as `kept/`, so what a command kept moves there by a
 * rename, extended attributes and all) and the claim of the process using it (`owner`). One
 * process at a time uses a fork's folder: a lower layer that changes under a mounted overlay
 * is undefined behaviour, so a second process (an `eitri exec --fork` while `eitri serve` has
 * the fork open) keeps its own layer in the temporary folder and says so. Programs never reach
 * the folder but as that fork's read-only lower layer and their own command's upper layer;
 * the host reaches what they made there only through pinned folders, or with `rm`, which never
 * follows a link.
 */
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { ownerTag, processEnded } from '../../util/owned-folders.ts'
import { isWithin } from '../../util/relative-paths.ts'
import { writeDurably } from '../../workspace/merge-journal.ts'
import { readStateJson } from '../../workspace/state-file.ts'
import { listPinned } from '../pinned-folder.ts'
import { removeFolders } from '../temporary-folders.ts'

/** What a fork's jail needs to keep its layer across restarts. */
export interface ForkKeep {
  /** The fork's folder for its layer, under eitri's state folder; made on first use. */
  readonly folder: string
  /** Whether the fork still wants its layer (open, not merged); asked when the jail closes. */
  wanted(): boolean
}

/** The name of a fork's layer folder inside the fork's state folder. */
export const FORK_KEEP_FOLDER = 'jail'

/** At most this many kept paths are listed (a command keeps its outermost paths, not files). */
const MAX_KEPT_PATHS = 100_000

/** One kept path: workspace-relative, no empty, `.` or `..` step. */
const keptPath = z
  .string()
  .min(1)
  .max(4096)
  .refine(
    (relative) =>
      !relative.startsWith('/') &&
      relative.split('/').every((step) => step !== '' && step !== '.' && step !== '..'),
    'a workspace-relative path',
  )

const KEPT_LIST = z.object({ paths: z.array(keptPath).max(MAX_KEPT_PATHS) })

const KEPT_BYTES = z.object({ bytes: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER) })

/** `layers-PID.START`: a process's command layers. */
const LAYERS_NAME = /^layers-(\d{1,10})\.(\d{1,20})$/

/** What {@link removeAside} renames a folder to before `rm` removes it. */
const REMOVED_NAME = /\.removed-[0-9a-f]{8}$/

/** Folders claimed by this process (one workshop per fork folder, even within a process). */
const claimedHere = new Set<string>()

/** Whether the process a tag `PID.START` names still runs. */
function tagRuns(tag: string): boolean {
  const match = /^(\d{1,10})\.(\d{1,20})$/.exec(tag)
  if (match === null) return false
  return !processEnded(Number(match[1]), match[2] as string)
}

/** A fork's layer folder, claimed by this process; see the module comment. */
export class ForkKeepFolder {
  /** The fork's folder (`forks/ID/jail`). */
  readonly folder: string
  /** The kept layer. */
  readonly kept: string
  /** This process's command layers. */
  readonly layers: string
  readonly #keep: ForkKeep
  #released = false

  private constructor(keep: ForkKeep) {
    this.#keep = keep
    this.folder = keep.folder
    this.kept = path.join(keep.folder, 'kept')
    this.layers = path.join(keep.folder, `layers-${ownerTag()}`)
  }

  /**
   * Claims the fork's folder for this process, or answers why it cannot keep the layer there:
   * the folder lies inside main's folder (an overlay refuses a layer inside another), or
   * another process (or workshop) uses it now. Command layers a dead process left are removed.
   */
  static claim(keep: ForkKeep, mainRoot: string): ForkKeepFolder | { readonly reason: string } {
    const folder = path.resolve(keep.folder)
    if (isWithin(realOrSame(path.dirname(folder)), realOrSame(mainRoot)))
      return { reason: "eitri's state folder lies inside the workspace" }
    if (claimedHere.has(folder))
      return { reason: 'another workshop of this process has this fork open' }
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 })
    const holder = takeOwner(folder)
    if (holder !== undefined)
      return { reason: `another eitri process (pid ${holder.split('.')[0]}) has this fork open` }
    claimedHere.add(folder)
    const claimed = new ForkKeepFolder({ ...keep, folder })
    try {
      claimed.#sweepLayers()
      // The kept layer's root is only ever below the upper layer's; root's 0755, as before.
      fs.mkdirSync(claimed.kept, { recursive: true, mode: 0o755 })
      fs.mkdirSync(claimed.layers, { recursive: true, mode: 0o700 })
    } catch (error) {
      claimed.#releaseClaim()
      throw error
    }
    return claimed
  }

  /**
   * The paths kept, as last listed. A list that cannot be read names the kept layer's top
   * entries instead: coarser (a whole top folder goes once the fork tracks something in it),
   * but never hiding a file of the fork.
   */
  paths(): string[] {
    try {
      const list = readStateJson(path.join(this.folder, 'kept.json'), KEPT_LIST, {
        what: "a fork's kept-layer list",
        fix: 'It is rebuilt from the kept layer.',
        maxBytes: 64 * 1024 * 1024,
      })
      if (list !== undefined) return list.paths
    } catch (error) {
      if (!EitriError.isInstance(error)) throw error
    }
    return listPinned(this.kept, '').map((entry) => entry.name)
  }

  /**
   * The kept layer's disk use as last recorded (kept-size.ts), so a new process need not walk
   * a kept `node_modules` to know it; undefined when no record can be read (then measured).
   */
  keptBytes(): number | undefined {
    try {
      return readStateJson(path.join(this.folder, 'kept-bytes.json'), KEPT_BYTES, {
        what: "a fork's kept-layer size",
        fix: 'It is measured again.',
        maxBytes: 1024,
      })?.bytes
    } catch (error) {
      if (!EitriError.isInstance(error)) throw error
      return undefined
    }
  }

  /**
   * Records the kept layer's disk use (undefined: forgets it, to be measured again). Written
   * before the moves it counts, so a crash between leaves it too high, never too low.
   */
  saveKeptBytes(bytes: number | undefined): void {
    const file = path.join(this.folder, 'kept-bytes.json')
    if (bytes === undefined) fs.rmSync(file, { force: true })
    else writeDurably(file, { bytes })
  }

  /** Lists the paths kept, durably: before what they name moves in, so it is never unlisted. */
  save(paths: Iterable<string>): void {
    writeDurably(path.join(this.folder, 'kept.json'), { paths: [...paths].sort() })
  }

  /**
   * Lets go of the folder: this process's command layers go, and the whole folder too once the
   * fork no longer wants it (discarded or merged meanwhile).
   */
  async release(): Promise<void> {
    if (this.#released) return
    this.#released = true
    let wanted = true
    try {
      wanted = this.#keep.wanted()
    } catch {
      // cannot tell: kept
    }
    await removeAside(this.layers)
    this.#releaseClaim()
    if (!wanted) await removeForkKeep(this.folder)
  }

  #releaseClaim(): void {
    claimedHere.delete(this.folder)
    const owner = path.join(this.folder, 'owner')
    try {
      if (fs.readFileSync(owner, 'utf8') === ownerTag()) fs.rmSync(owner, { force: true })
    } catch {
      // gone already
    }
  }

  /**
   * Removes the command layers of processes that no longer run (a crash mid-command), and what
   * a removal cut short left.
   */
  #sweepLayers(): void {
    const leftovers: string[] = []
    for (const name of fs.readdirSync(this.folder)) {
      const match = LAYERS_NAME.exec(name)
      if (REMOVED_NAME.test(name)) leftovers.push(path.join(this.folder, name))
      else if (match !== null && !tagRuns(`${match[1]}.${match[2]}`))
        void removeAside(path.join(this.folder, name))
    }
    void removeFolders(leftovers)
  }
}

/**
 * Takes the `owner` file for this process: made whole under a name of its own, then linked in
 * (one atomic step that fails if another owner is there). Answers the live owner's tag when
 * another process has the folder.
 */
function takeOwner(folder: string): string | undefined {
  const mine = path.join(folder, `owner.${ownerTag()}.${randomBytes(3).toString('hex')}`)
  fs.writeFileSync(mine, ownerTag(), { mode: 0o600, flag: 'wx' })
  try {
    return takeClaim(mine, path.join(folder, 'owner'), 0)
  } finally {
    fs.rmSync(mine, { force: true })
  }
}

/**
 * Links `mine` in at `claim`, replacing a dead process's claim there. Two processes that both
 * find the same dead claim must not both replace it (the second would remove the first's new
 * claim and take the folder too): only the one that takes `CLAIM.replacing-HOLDER` first,
 * the same way, may remove it. A process that died while replacing leaves that name, which is
 * replaced in turn, a few levels deep at most. Answers the live holder's tag, if any.
 */
function takeClaim(mine: string, claim: string, depth: number): string | undefined {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.linkSync(mine, claim)
      return undefined
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const holder = readClaim(claim)
    if (holder === undefined) continue // gone meanwhile: try again
    if (holder === ownerTag() || tagRuns(holder)) return holder
    if (depth >= 3) break
    const replacing = `${claim}.replacing-${createHash('sha256').update(holder).digest('hex').slice(0, 16)}`
    const replacer = takeClaim(mine, replacing, depth + 1)
    if (replacer !== undefined) return replacer
    try {
      // Only the holder of `replacing` removes this holder's claim: it is still there.
      if (readClaim(claim) === holder) fs.rmSync(claim, { force: true })
    } finally {
      fs.rmSync(replacing, { force: true })
    }
  }
  return 'unknown'
}

/** A claim's tag, or undefined when there is none. */
function readClaim(claim: string): string | undefined {
  try {
    return fs.readFileSync(claim, 'utf8')
  } catch {
    return undefined
  }
}

/** Whether a live process holds a fork's layer folder (`folder`, `forks/ID/jail`) now. */
export function forkLayerInUse(folder: string): boolean {
  const holder = readClaim(path.join(folder, 'owner'))
  return holder !== undefined && tagRuns(holder)
}

/**
 * Removes a fork's layer folder (a fork merged or discarded) unless a live process has it open
 * (that process removes it when its jail closes). Never throws.
 */
export async function removeUnclaimedForkKeep(folder: string): Promise<void> {
  if (forkLayerInUse(folder)) return
  await removeForkKeep(folder)
}

/**
 * Removes the layer folders of forks that no longer want them (`wanted` answers false for a
 * fork discarded, merged or gone) and no live process holds: what a process that died between
 * a discard and its jail's closing left. One listing and a stat per fork. Never throws.
 */
export async function sweepForkKeeps(
  forksFolder: string,
  wanted: (id: string) => boolean,
): Promise<void> {
  let ids: string[]
  try {
    ids = fs.readdirSync(forksFolder)
  } catch {
    return
  }
  const removals: Promise<void>[] = []
  for (const id of ids) {
    const folder = path.join(forksFolder, id, FORK_KEEP_FOLDER)
    if (fs.lstatSync(folder, { throwIfNoEntry: false })?.isDirectory() !== true) continue
    let keep = true
    try {
      keep = wanted(id)
    } catch {
      // cannot tell: kept
    }
    if (!keep) removals.push(removeUnclaimedForkKeep(folder))
  }
  await Promise.all(removals)
}

/**
 * Removes a fork's layer folder: renamed out of the way at once, then removed by an `rm` that is
 * not waited for. A kept layer can hold a whole `node_modules` (seconds to remove), and neither
 * a merge nor a server's exit should wait on that: the `rm` runs on its own, detached, after
 * this process has gone.
 */
async function removeForkKeep(folder: string): Promise<void> {
  await removeAside(folder, false)
}

/**
 * Renames `folder` to a name of its own beside it (at once, the name is free again) and removes
 * it with `rm`, which never follows a link, even one a program swaps in meanwhile; `wait` says
 * whether to return only once `rm` has ended.
 */
async function removeAside(folder: string, wait = true): Promise<void> {
  const aside = `${folder}.removed-${randomBytes(4).toString('hex')}`
  try {
    fs.renameSync(folder, aside)
  } catch {
    return // gone already
  }
  const removed = removeFolders([aside])
  if (wait) await removed
}

/** A path with its links resolved, where it exists. */
function realOrSame(at: string): string {
  try {
    return fs.realpathSync(at)
  } catch {
    return path.resolve(at)
  }
}
