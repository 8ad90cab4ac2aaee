/**
 * @module access/git-metadata/history-rules
 * What a change may do to an existing repository's history, defined by what git will read
 * afterwards rather than by file: no ref git reads on the host becomes unreadable, and every
 * ref written is one git reads (ref-rules.ts); reflogs only grow, by whole lines; objects are
 * what they claim and are written once, and the files git derives from them and trusts about
 * history never come back (object-rules.ts). Ref moves are allowed: a snapshot records them.
 * Neither a ref nor the index may deliver what a write may not: a commit whose checkout writes
 * a protected path (checkout-rules.ts), an index that stages one (index-rules.ts).
 *
 * Every file a change puts inside an existing repository folder is read once, bounded; the
 * rules judge those bytes, and the caller must write exactly those bytes (`contents`): a
 * program may rewrite a file between a read that is judged and a read that is copied.
 */
import { OBJECT_ID_HEX_LENGTH, type ObjectFormat } from '../../workspace/git/object-format.ts'
import type { StagedObject } from '../../workspace/git/tree-changes.ts'
import { CheckoutJudge, type MayWrite, type RefMove } from './checkout-rules.ts'
import { gitEntryKind, gitPlaceByName, objectFileKind } from './git-place.ts'
import {
  JudgedContents,
  type HistoryChange,
  type HistoryHost,
  type HistoryProposal,
  type InsideChange,
  type RepositoryJudging,
} from './history-context.ts'
import { isObjectId } from './git-ref-format.ts'
import { judgeIndex } from './index-rules.ts'
import { judgeObjects } from './object-rules.ts'
import { hostHeadId, judgeRefs, STASH_REF } from './ref-rules.ts'

export type { HistoryChange, HistoryHost, HistoryProposal } from './history-context.ts'
export type { MayWrite } from './checkout-rules.ts'

/** What the rules found. */
export interface HistoryJudgement {
  /** Changes refused, by path, with why. */
  readonly refused: Map<string, string>
  /** Changes that would change nothing (an object written again, byte for byte). */
  readonly unchanged: Set<string>
  /** Derived files left out, by path, with why: not written, and not a failure. */
  readonly dropped: Map<string, string>
  /**
   * The bytes judged, for every file change inside an existing repository folder that was not
   * refused: what is written must be these bytes, not the file read again.
   */
  readonly contents: Map<string, Buffer>
}

/** The policy and bounds of one judgement. */
export interface HistoryOptions {
  /**
   * The write policy for a path of a work tree: a ref may not come to lead to a commit whose
   * checkout would write (or remove) a path this refuses.
   */
  readonly mayWrite: MayWrite
  /** The largest file read whole. @default 64 MiB */
  readonly maxFileBytes?: number
}

const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024
/**
 * Inflated bytes one judgement spends checking loose objects: a small compressed file can
 * claim gigabytes, and each is inflated to be hashed.
 */
const MAX_INFLATED_BYTES = 2 * 1024 * 1024 * 1024

/**
 * Judges the changes that fall inside existing repository folders (`.git` folders here; the
 * caller has already refused what the path policy refuses). Changes elsewhere are ignored, and
 * so are repositories the host does not have yet (not the host's history).
 */
export async function judgeHistory(
  changes: readonly HistoryChange[],
  host: HistoryHost,
  proposal: HistoryProposal,
  options: HistoryOptions,
): Promise<HistoryJudgement> {
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES
  const judged = new JudgedContents(proposal, maxFileBytes)
  const refused = new Map<string, string>()
  const unchanged = new Set<string>()
  const dropped = new Map<string, string>()
  const budget = { remaining: MAX_INFLATED_BYTES }
  const byRepository = new Map<string, InsideChange[]>()
  for (const change of changes) {
    const place = gitPlaceByName(change.path)
    if (place.type !== 'inside') continue
    const list = byRepository.get(place.gitDir) ?? []
    list.push({ change, inner: place.inner })
    byRepository.set(place.gitDir, list)
  }
  const written: HistoryChange[] = []
  for (const [gitDir, inside] of byRepository) {
    if ((await host.kind(gitDir)) !== 'directory') continue // a new repository: not the history's
    const format = await host.objectFormat(gitDir)
    const repository: RepositoryJudging = {
      gitDir,
      host,
      format,
      judged,
      refused,
      unchanged,
      dropped,
      maxFileBytes,
    }
    for (const { change } of inside) {
      if (change.type === 'symlink') {
        refused.set(
          change.path,
          `${change.path} was not written back: git keeps no links in its repository folder`,
        )
      }
    }
    const newObjects = await judgeObjects(repository, inside, budget)
    for (const item of inside) await judgeReflog(repository, item)
    const staged = stagedObjects(repository, inside)
    const checkout = new CheckoutJudge(
      repository,
      options.mayWrite,
      () => hostHeadId(repository),
      staged,
    )
    await judgeRefs(repository, inside, newObjects, checkout)
    await judgeNamedCommits(repository, inside, checkout)
    await judgeIndex(repository, inside, checkout, staged)
    // Everything else written inside is read once too, so what is copied is what was seen.
    for (const { change } of inside) {
      if (change.type !== 'file' || refused.has(change.path) || dropped.has(change.path)) continue
      if (unchanged.has(change.path)) continue
      if ((await judged.read(change.path)) === undefined) {
        refused.set(
          change.path,
          `${change.path} was not written back: it could not be read whole (it is larger than ${maxFileBytes} bytes, or no longer a file)`,
        )
      } else written.push(change)
    }
    refuseFoldersAbove(inside, refused)
  }
  const contents = new Map<string, Buffer>()
  for (const change of written) {
    const bytes = judged.contents.get(change.path)
    if (!refused.has(change.path) && bytes !== undefined) contents.set(change.path, bytes)
  }
  return { refused, unchanged, dropped, contents }
}

/**
 * A reflog only grows: its new text starts with the old one, and what is added is whole lines
 * as git writes them (`<old id> <new id> <who> <when>\t<message>`). A new reflog is whole
 * lines too. It is never deleted (reflogs are how lost commits are found again).
 */
async function judgeReflog(repository: RepositoryJudging, item: InsideChange): Promise<void> {
  const { change, inner } = item
  if (gitEntryKind(inner) !== 'reflog' || inner.endsWith('.lock')) return
  const { host, refused } = repository
  const path = change.path
  const before = await host.kind(path)
  if (before === 'directory' && change.type !== 'file') return
  if (change.type === 'delete') {
    if (before !== undefined) {
      refused.set(
        path,
        `${path} was not deleted: reflogs only grow (they are how lost commits are found again)`,
      )
    }
    return
  }
  if (change.type !== 'file') {
    if (before !== undefined) refused.set(path, `${path}: a reflog must stay a file`)
    return
  }
  const next = await repository.judged.read(path)
  const old = before === 'file' ? await host.read(path, repository.maxFileBytes) : Buffer.alloc(0)
  if (before !== undefined && before !== 'file') {
    refused.set(path, `${path}: a reflog must stay a file`)
  } else if (old === undefined || next === undefined) {
    refused.set(path, `${path} was not written back: it is too large to check`)
  } else if (!startsWith(next, old)) {
    refused.set(path, `${path} was not written back: reflogs only grow, and this one lost lines`)
  } else if (!wholeReflogLines(next.subarray(old.byteLength), old, repository.format)) {
    refused.set(
      path,
      `${path} was not written back: what was added is not whole reflog lines as git writes them ("<old id> <new id> <who> <when>\\t<message>\\n")`,
    )
  }
}

/** Whether `added` (after `old`) is whole reflog lines of `format`. */
function wholeReflogLines(added: Buffer, old: Buffer, format: ObjectFormat): boolean {
  if (added.byteLength === 0) return true
  const text = added.toString('latin1')
  if (!text.endsWith('\n')) return false
  const lines = text.slice(0, -1).split('\n')
  // An old text without its final newline (a crash) is continued by the first line added.
  if (old.byteLength > 0 && old[old.byteLength - 1] !== 0x0a) lines.shift()
  const length = OBJECT_ID_HEX_LENGTH[format]
  return lines.every(
    (line) =>
      isObjectId(line.slice(0, length), format) &&
      line[length] === ' ' &&
      isObjectId(line.slice(length + 1, 2 * length + 1), format) &&
      line[2 * length + 1] === ' ',
  )
}

/** The new object files accepted (refs in the same change may lead to them), with their bytes. */
function stagedObjects(
  repository: RepositoryJudging,
  inside: readonly InsideChange[],
): StagedObject[] {
  const { refused, unchanged, dropped, judged } = repository
  const staged: StagedObject[] = []
  for (const { change, inner } of inside) {
    const kind = objectFileKind(inner)
    if (change.type !== 'file' || (kind !== 'loose' && kind !== 'pack' && kind !== 'pack-index'))
      continue
    if (refused.has(change.path) || unchanged.has(change.path) || dropped.has(change.path)) continue
    const bytes = judged.contents.get(change.path)
    if (bytes !== undefined) staged.push({ inner: inner.slice('objects/'.length), bytes })
  }
  return staged
}

/**
 * Commits named besides refs: the entries a reflog gains (`git checkout main@{1}` checks one
 * out) and the `*_HEAD` files (`git reset --hard ORIG_HEAD`). Their old ids are the command's
 * to choose, so each is judged against the host's `HEAD` alone.
 */
async function judgeNamedCommits(
  repository: RepositoryJudging,
  inside: readonly InsideChange[],
  checkout: CheckoutJudge,
): Promise<void> {
  const { refused, judged, host, format, maxFileBytes } = repository
  const length = OBJECT_ID_HEX_LENGTH[format]
  const moves: { move: RefMove; item: InsideChange }[] = []
  for (const item of inside) {
    const { change, inner } = item
    if (change.type !== 'file' || refused.has(change.path) || inner.endsWith('.lock')) continue
    const isReflog = gitEntryKind(inner) === 'reflog'
    if (!isReflog && !/^[A-Z][A-Z_]*_HEAD$/.test(inner)) continue
    const next = await judged.read(change.path)
    if (next === undefined) continue // refused by the rules that read it
    const old =
      isReflog && (await host.kind(change.path)) === 'file'
        ? ((await host.read(change.path, maxFileBytes)) ?? Buffer.alloc(0))
        : Buffer.alloc(0)
    const added = next.subarray(startsWith(next, old) ? old.byteLength : 0).toString('latin1')
    const ids = new Set<string>()
    for (const line of added.split('\n')) {
      // A reflog line: `<old id> <new id> …`; a *_HEAD file: `<id>` first on each line.
      const id = isReflog ? line.slice(length + 1, 2 * length + 1) : line.slice(0, length)
      if (isObjectId(id, format)) ids.add(id)
    }
    for (const id of ids) {
      const stash = isReflog && inner === `logs/${STASH_REF}`
      moves.push({
        move: {
          name: isReflog ? `an entry of ${inner}` : inner,
          after: id,
          ...(stash ? { stash: true as const } : {}),
        },
        item,
      })
    }
  }
  const verdicts = await checkout.judge(moves.map(({ move }) => move))
  moves.forEach(({ item }, index) => {
    const verdict = verdicts[index]
    if (verdict !== undefined && !refused.has(item.change.path))
      refused.set(item.change.path, `${item.change.path} was not written back: ${verdict}`)
  })
}

/** Folder deletions are refused when something below them was kept. */
function refuseFoldersAbove(inside: readonly InsideChange[], refused: Map<string, string>): void {
  for (const { change } of inside) {
    if (change.type !== 'delete' || refused.has(change.path)) continue
    const kept = [...refused.keys()].find((path) => path.startsWith(`${change.path}/`))
    if (kept !== undefined)
      refused.set(change.path, `${change.path} was not deleted: it holds ${kept}, which was kept`)
  }
}

function startsWith(text: Buffer, prefix: Buffer): boolean {
  return text.byteLength >= prefix.byteLength && text.subarray(0, prefix.byteLength).equals(prefix)
}
