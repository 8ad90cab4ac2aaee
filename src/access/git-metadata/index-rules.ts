/**
 * @module access/git-metadata/index-rules
 * The index may not stage what a write may not. What the index holds is written to the work
 * tree by the host's next `git checkout .`, `git restore .`, `git checkout-index -a` or
 * `git stash`, so an entry staged in the jail for a protected path (`.envrc`, a hook in the
 * hooks folder) is a write of that path waiting to happen. A new index is compared with the
 * host's, entry by entry (path and stage: mode and object id), and every entry that is new or
 * changed is put to the write policy as a write of its path (a removed one as a removal); one
 * refused keeps the host's index.
 *
 * The index is read as git reads it, and checked against git's own reading (`git ls-files`)
 * of exactly the bytes that are written. What git reads besides the entries is never taken
 * over: the extensions are dropped (git rebuilds its cache tree and untracked cache; a forged
 * cache tree would make the next commit record another tree than the entries, a resolve-undo
 * record would let `git checkout -m` write other content), and an index git cannot read
 * without another file — a split index naming a `sharedindex.*` file, a sparse index — is
 * refused. The work is bounded: an index of too many entries, or with too many changed, is
 * refused and says why.
 */
import {
  parseIndex,
  indexWithoutExtensions,
  type IndexEntry,
} from '../../workspace/git/index-file.ts'
import { listIndex } from '../../workspace/git/index-listing.ts'
import type { StagedObject, TreeEntryChange } from '../../workspace/git/tree-changes.ts'
import type { CheckoutJudge } from './checkout-rules.ts'
import type { InsideChange, RepositoryJudging } from './history-context.ts'

/** Entries an index may hold to be judged (a very large monorepository holds a few hundred thousand). */
export const MAX_INDEX_ENTRIES = 500_000
/** Entries one change of the index may add, change or remove to be judged. */
export const MAX_CHANGED_ENTRIES = 20_000

const LINK_MODE = '120000'

/**
 * Judges a change of the repository's `index`: refused (the host's stays) when it stages what
 * the write policy refuses, cannot be read as git reads it, or is past the bounds; otherwise
 * what is written is the index without its extensions (`judged` holds those bytes then).
 */
export async function judgeIndex(
  repository: RepositoryJudging,
  inside: readonly InsideChange[],
  checkout: CheckoutJudge,
  staged: readonly StagedObject[],
): Promise<void> {
  const { refused, judged, host, format, maxFileBytes } = repository
  for (const { change, inner } of inside) {
    if (inner !== 'index' || refused.has(change.path)) continue
    const path = change.path
    const refuse = (why: string): void => {
      refused.set(path, `${path} was not written back: ${why}`)
    }
    // No index is an empty one: nothing is staged, so nothing is written from it.
    if (change.type === 'delete') continue
    if (change.type !== 'file') {
      refuse('the index must stay a file')
      continue
    }
    const bytes = await judged.read(path)
    if (bytes === undefined) {
      refuse(`it is larger than the ${maxFileBytes} bytes an index may be to be judged`)
      continue
    }
    const parsed = parseIndex(bytes, format, MAX_INDEX_ENTRIES)
    if (!parsed.ok) {
      refuse(`it cannot be judged as an index: ${parsed.reason}`)
      continue
    }
    const mandatory = parsed.extensions.filter((signature) => !/^[A-Z]/.test(signature))
    if (mandatory.length > 0) {
      refuse(
        mandatory.includes('link')
          ? 'it is a split index, which names a sharedindex file that does not come back from the jail (turn core.splitIndex off to stage from the jail)'
          : `it needs the ${mandatory.map((signature) => JSON.stringify(signature)).join(', ')} extension, which is not taken over from the jail (a sparse index: turn index.sparse off to stage from the jail)`,
      )
      continue
    }
    const written =
      parsed.extensions.length === 0 ? bytes : indexWithoutExtensions(bytes, parsed, format)
    const listed = await listIndex(written, format, MAX_INDEX_ENTRIES)
    if (!listed.ok) {
      refuse(`it cannot be judged as an index: ${listed.reason}`)
      continue
    }
    if (!sameEntries(listed.entries, parsed.entries)) {
      refuse('git reads its entries otherwise than they were judged, so it is not taken over')
      continue
    }
    const old =
      (await host.kind(path)) === 'file' ? await host.read(path, maxFileBytes) : Buffer.alloc(0)
    const before =
      old === undefined || old.byteLength === 0
        ? undefined
        : parseIndex(old, format, MAX_INDEX_ENTRIES)
    // An index of the host's that cannot be read counts as empty: every entry is judged.
    const changes = changedEntries(before?.ok === true ? before.entries : [], parsed.entries)
    if (typeof changes === 'string') {
      refuse(changes)
      continue
    }
    const verdict = await judgeEntries(repository, checkout, staged, changes)
    if (verdict !== undefined) {
      refuse(verdict)
      continue
    }
    if (written !== bytes) judged.replace(path, written)
  }
}

/** What changed between the host's entries and the new ones, as a checkout would see it. */
function changedEntries(
  before: readonly IndexEntry[],
  after: readonly IndexEntry[],
): (TreeEntryChange & { id: string })[] | string {
  const key = (entry: IndexEntry): string => `${entry.stage}\0${entry.path}`
  const old = new Map(before.map((entry) => [key(entry), entry]))
  const now = new Set(after.map(key))
  const stillNamed = new Set(after.map((entry) => entry.path))
  const changes: (TreeEntryChange & { id: string })[] = []
  for (const entry of after) {
    const was = old.get(key(entry))
    if (was !== undefined && was.mode === entry.mode && was.id === entry.id) continue
    changes.push({
      path: entry.path,
      status: was === undefined ? 'added' : 'modified',
      mode: entry.mode,
      id: entry.id,
    })
  }
  for (const entry of before) {
    if (now.has(key(entry)) || stillNamed.has(entry.path)) continue
    changes.push({ path: entry.path, status: 'deleted', mode: '000000', id: entry.id })
  }
  if (changes.length > MAX_CHANGED_ENTRIES) {
    return `it changes ${changes.length} entries, more than the ${MAX_CHANGED_ENTRIES} judged at once; stage in smaller steps`
  }
  const decoded: (TreeEntryChange & { id: string })[] = []
  for (const change of changes) {
    const name = Buffer.from(change.path, 'latin1')
    const text = name.toString('utf8')
    if (!Buffer.from(text, 'utf8').equals(name)) {
      return `it stages a path that is not valid UTF-8 (${JSON.stringify(text)}), which cannot be judged`
    }
    decoded.push({ ...change, path: text })
  }
  return decoded
}

/** Why the changed entries may not be staged from the jail, or undefined. */
async function judgeEntries(
  repository: RepositoryJudging,
  checkout: CheckoutJudge,
  staged: readonly StagedObject[],
  changes: readonly (TreeEntryChange & { id: string })[],
): Promise<string | undefined> {
  for (const change of changes) {
    const type = Number.parseInt(change.mode, 8) & 0o170000
    if (
      change.status !== 'deleted' &&
      type !== 0o100000 &&
      type !== 0o120000 &&
      type !== 0o160000
    ) {
      return `it stages ${checkout.where(change.path)} with mode ${change.mode}, which git checks out as no file, link or submodule`
    }
  }
  const links = changes.filter((change) => change.status !== 'deleted' && change.mode === LINK_MODE)
  const targets = await repository.host.linkTargets(
    repository.gitDir,
    staged,
    links.map((change) => change.id),
    repository.format,
  )
  if (targets === undefined) {
    return 'git could not read the targets of the links it stages, so what checking them out writes cannot be judged'
  }
  const refused = await checkout.firstRefused(
    changes.map(({ id, ...change }) =>
      change.mode === LINK_MODE && change.status !== 'deleted'
        ? { ...change, target: targets.get(id) ?? '' }
        : change,
    ),
  )
  if (refused === undefined) return undefined
  const where = checkout.where(refused.change.path)
  return refused.change.status === 'deleted'
    ? `it unstages ${where} (the next commit would delete it), which a command may not remove (${refused.reason}). Stage only changes the command may make; a change to ${where} is the user's to make`
    : `it stages ${where}, which \`git checkout .\`, \`git restore .\` or \`git stash\` on the host would then write, and a command may not write ${where} (${refused.reason}). Stage only files the command may write; a change to ${where} is the user's to make`
}

function sameEntries(a: readonly IndexEntry[], b: readonly IndexEntry[]): boolean {
  return (
    a.length === b.length &&
    a.every((entry, index) => {
      const other = b[index]
      return (
        other !== undefined &&
        entry.path === other.path &&
        entry.stage === other.stage &&
        entry.mode === other.mode &&
        entry.id === other.id
      )
    })
  )
}
