/**
 * @module access/git-metadata/ref-rules
 * No ref git can read on the host may become unreadable from the jail, and every ref the jail
 * writes must be one git reads. Refs are resolved the way git resolves them — a loose file
 * first (one git cannot parse hides the packed value), then `packed-refs`, symbolic refs
 * followed — on the host before the change and after it. A ref that resolved before must
 * resolve after (moves are allowed: a snapshot records them), and a ref that now resolves to
 * another object must resolve to one the repository holds. `HEAD` and the other `*_HEAD` files
 * must hold what git writes there.
 */
import { OBJECT_ID_HEX_LENGTH } from '../../workspace/git/object-format.ts'
import { gitEntryKind } from './git-place.ts'
import {
  isListedRefName,
  isObjectId,
  parseLooseRef,
  parsePackedRefs,
  type PackedRef,
  type RefValue,
} from './git-ref-format.ts'
import type { InsideChange, RepositoryJudging } from './history-context.ts'
import type { CheckoutJudge, RefMove } from './checkout-rules.ts'

/** A loose ref is a few dozen bytes; a larger file is none git wrote. */
const MAX_LOOSE_REF_BYTES = 4096
/** The ref `git stash` keeps the latest stash in (its reflog holds the others). */
export const STASH_REF = 'refs/stash'
/** git follows at most this many symbolic refs in a row. */
const MAX_SYMBOLIC_DEPTH = 5

/** What a name holds as a loose file: a value, a file git cannot parse, or no file. */
type Loose = RefValue | 'broken' | undefined
/** The host's packed refs, or 'unreadable' when too large to read whole. */
type Packed = ReadonlyMap<string, PackedRef> | 'unreadable'

/** How a ref fails after the change. */
interface Failure {
  readonly name: string
  readonly kind: 'lost' | 'reverted' | 'dangling' | 'missing' | 'unknown'
  /** The names followed, from `name` on. */
  readonly chain: readonly string[]
  readonly id?: string
}

/**
 * Judges the changes to refs, `packed-refs`, `HEAD` and the `*_HEAD` files of one repository.
 * A ref (or `HEAD`) that comes to lead to another commit is also judged by what checking it
 * out would write (`checkout`).
 */
export async function judgeRefs(
  repository: RepositoryJudging,
  inside: readonly InsideChange[],
  newObjects: ReadonlySet<string>,
  checkout: CheckoutJudge,
): Promise<void> {
  const { refused, format } = repository
  await judgePseudoRefs(repository, inside, newObjects)
  const written = new Map<string, { value: RefValue; item: InsideChange }>()
  for (const item of inside) {
    const { change, inner } = item
    if (change.type !== 'file' || gitEntryKind(inner) !== 'ref' || inner.endsWith('.lock')) continue
    if (!isListedRefName(inner)) {
      refused.set(
        change.path,
        `${change.path} was not written back: git does not accept ${JSON.stringify(inner)} as a ref name, so it would not read it`,
      )
      continue
    }
    const content = await repository.judged.read(change.path)
    const value = content === undefined ? undefined : parseLooseRef(content, format)
    if (value === undefined) {
      refused.set(
        change.path,
        `${change.path} was not written back: git would not read it as a ref (a ref file holds a ${OBJECT_ID_HEX_LENGTH[format]}-digit object id and a newline, or "ref: refs/…" and a newline)`,
      )
    } else written.set(inner, { value, item })
  }
  const packedChange = inside.find(({ inner }) => inner === 'packed-refs')
  const packedAfter = await proposedPackedRefs(repository, packedChange)
  const host = hostRefs(repository)
  const gone = await refsGone(repository, inside)
  // Refusing one change brings the host's version back, which may break a ref another change
  // relied on (a loose ref deleted because packed-refs took it over): judge again until stable.
  for (let round = 0; round <= inside.length; round++) {
    const active = (item: InsideChange): boolean => !refused.has(item.change.path)
    const looseAfter = new Map<string, Loose>()
    const sources = new Map<string, InsideChange[]>()
    const addSource = (name: string, item: InsideChange): void => {
      sources.set(name, [...(sources.get(name) ?? []), item])
    }
    for (const [name, items] of gone) {
      for (const item of items.filter(active)) {
        looseAfter.set(name, undefined)
        addSource(name, item)
      }
    }
    for (const [name, { value, item }] of written) {
      if (!active(item)) continue
      looseAfter.set(name, value)
      addSource(name, item)
    }
    const packedBefore = await host.packed()
    const packedActive =
      packedChange !== undefined && packedAfter !== undefined && active(packedChange)
    const packedNow: Packed = packedActive ? packedAfter : packedBefore
    const touched = new Set(looseAfter.keys())
    const packedTouched = new Set<string>()
    if (packedActive && packedBefore === 'unreadable') {
      refused.set(
        packedChange.change.path,
        `${packedChange.change.path} was not written back: the workspace's packed-refs is too large to check that no ref is lost`,
      )
      continue
    }
    if (packedActive && packedBefore !== 'unreadable') {
      for (const name of new Set([...packedBefore.keys(), ...packedAfter.keys()])) {
        const was = packedBefore.get(name)
        const is = packedAfter.get(name)
        if (was?.id !== is?.id || was?.peeled !== is?.peeled) {
          touched.add(name)
          packedTouched.add(name)
        }
      }
    }
    const resolve = async (
      name: string,
      side: 'before' | 'after',
    ): Promise<{ id?: string; chain: string[]; unknown?: true }> => {
      const chain: string[] = []
      let current = name
      for (let depth = 0; depth <= MAX_SYMBOLIC_DEPTH; depth++) {
        chain.push(current)
        const loose =
          side === 'after' && looseAfter.has(current)
            ? looseAfter.get(current)
            : await host.loose(current)
        if (loose === 'broken') return { chain }
        if (loose?.type === 'object') return { id: loose.id, chain }
        if (loose?.type === 'symbolic') {
          current = loose.target
          continue
        }
        const packed = side === 'after' ? packedNow : packedBefore
        if (packed === 'unreadable') return { chain, unknown: true }
        const id = packed.get(current)?.id
        return id === undefined ? { chain } : { id, chain }
      }
      return { chain }
    }
    const failures: Failure[] = []
    const needs: { id: string; name: string; chain: readonly string[] }[] = []
    for (const name of touched) {
      const before = await resolve(name, 'before')
      const after = await resolve(name, 'after')
      if (before.unknown === true || after.unknown === true) {
        failures.push({ name, kind: 'unknown', chain: after.chain })
      } else if (before.id !== undefined) {
        if (after.id === undefined) failures.push({ name, kind: 'lost', chain: after.chain })
        else if (after.id === before.id) {
          // Kept as it was.
        } else if (!written.has(name) && !packedTouched.has(name) && after.chain.length === 1) {
          // A loose ref removed while packed-refs still holds an older value: git never does
          // that (it packs the ref first), and the branch would silently move back.
          failures.push({ name, kind: 'reverted', chain: after.chain, id: after.id })
        } else needs.push({ id: after.id, name, chain: after.chain })
      } else if (
        written.has(name) ||
        (packedTouched.has(name) && packedNow !== 'unreadable' && packedNow.has(name))
      ) {
        // A ref written (or packed) now must resolve, though it did not before.
        if (after.id === undefined) failures.push({ name, kind: 'dangling', chain: after.chain })
        else needs.push({ id: after.id, name, chain: after.chain })
      }
      const peeled =
        packedTouched.has(name) && packedNow !== 'unreadable'
          ? packedNow.get(name)?.peeled
          : undefined
      if (peeled !== undefined) needs.push({ id: peeled, name, chain: [name] })
    }
    const unknownIds = needs.map((need) => need.id).filter((id) => !newObjects.has(id))
    const missing =
      unknownIds.length === 0
        ? new Set<string>()
        : await repository.host.missingObjects(repository.gitDir, unknownIds, format)
    for (const need of needs) {
      if (missing.has(need.id)) failures.push({ ...need, kind: 'missing' })
    }
    let refusedNow = 0
    for (const failure of failures) {
      const responsible = failure.chain.flatMap((name) => [
        ...(sources.get(name) ?? []),
        ...(packedTouched.has(name) && packedChange !== undefined ? [packedChange] : []),
      ])
      // Nothing named: refuse every ref change rather than let the ref break.
      const blamed =
        responsible.length > 0
          ? responsible
          : inside.filter(({ inner }) => gitEntryKind(inner) === 'ref' || inner === 'packed-refs')
      for (const item of blamed.filter(active)) {
        refused.set(item.change.path, refusal(item, failure))
        refusedNow++
      }
    }
    if (refusedNow > 0) continue
    // Every ref holds; now what checking out the ones that moved would write.
    const moves: { move: RefMove; blamed: InsideChange[] }[] = []
    for (const name of touched) {
      const before = await resolve(name, 'before')
      const after = await resolve(name, 'after')
      if (after.id === undefined || after.id === before.id) continue
      const blamed = after.chain.flatMap((link) => [
        ...(sources.get(link) ?? []),
        ...(packedTouched.has(link) && packedChange !== undefined ? [packedChange] : []),
      ])
      moves.push({
        move: {
          name,
          after: after.id,
          ...(before.id === undefined ? {} : { before: before.id }),
          ...(name === STASH_REF ? { stash: true as const } : {}),
        },
        blamed,
      })
    }
    const head = inside.find(
      (item) => item.inner === 'HEAD' && item.change.type === 'file' && active(item),
    )
    const headValue =
      head === undefined ? undefined : await repository.judged.read(head.change.path)
    const parsedHead = headValue === undefined ? undefined : parseLooseRef(headValue, format)
    if (head !== undefined && parsedHead !== undefined) {
      const before = await resolve('HEAD', 'before')
      const after =
        parsedHead.type === 'object'
          ? { id: parsedHead.id, chain: ['HEAD'] }
          : await resolve(parsedHead.target, 'after')
      if (after.id !== undefined && after.id !== before.id) {
        moves.push({
          move: {
            name: 'HEAD',
            after: after.id,
            ...(before.id === undefined ? {} : { before: before.id }),
          },
          blamed: [head],
        })
      }
    }
    const verdicts = await checkout.judge(moves.map(({ move }) => move))
    moves.forEach(({ blamed }, index) => {
      const verdict = verdicts[index]
      if (verdict === undefined) return
      // Nothing named: refuse every ref change rather than let the commit through.
      const responsible =
        blamed.length > 0
          ? blamed
          : inside.filter(({ inner }) => gitEntryKind(inner) === 'ref' || inner === 'packed-refs')
      for (const item of responsible.filter(active)) {
        refused.set(item.change.path, `${item.change.path} was not written back: ${verdict}`)
        refusedNow++
      }
    })
    if (refusedNow === 0) return
  }
  // Not settled within as many rounds as there are changes (never expected): fail closed.
  for (const { change, inner } of inside) {
    if (refused.has(change.path)) continue
    if (gitEntryKind(inner) === 'ref' || inner === 'packed-refs' || inner === 'HEAD') {
      refused.set(
        change.path,
        `${change.path} was not written back: the refs of this change could not be judged together`,
      )
    }
  }
}

/** The commit the host's `HEAD` leads to now, as git resolves it; undefined when none. */
export async function hostHeadId(repository: RepositoryJudging): Promise<string | undefined> {
  const host = hostRefs(repository)
  let current = 'HEAD'
  for (let depth = 0; depth <= MAX_SYMBOLIC_DEPTH; depth++) {
    const loose = await host.loose(current)
    if (loose === 'broken') return undefined
    if (loose?.type === 'object') return loose.id
    if (loose?.type === 'symbolic') {
      current = loose.target
      continue
    }
    const packed = await host.packed()
    return packed === 'unreadable' ? undefined : packed.get(current)?.id
  }
  return undefined
}

/** The refused change's message, for a model to act on. */
function refusal(item: InsideChange, failure: Failure): string {
  const path = item.change.path
  const what =
    failure.kind === 'lost'
      ? `${failure.name} would be lost`
      : failure.kind === 'reverted'
        ? `${failure.name} would fall back to the older ${failure.id ?? '?'} that packed-refs holds`
        : failure.kind === 'dangling'
          ? `${failure.name} would lead to ${failure.chain.at(-1) ?? failure.name}, which git cannot read as a ref`
          : failure.kind === 'missing'
            ? `${failure.name} would point at ${failure.id ?? '?'}, an object this repository does not hold`
            : `the workspace's packed-refs is too large to check that ${failure.name} is kept`
  return item.change.type === 'delete' || item.change.type === 'directory'
    ? `${path} was not deleted: no ref may disappear or break from the jail (${what}); snapshots keep ref moves, not deletions`
    : `${path} was not written back: ${what} (no ref may disappear or break from the jail)`
}

/** The packed refs a change proposes: undefined when there is no such change or it is refused. */
async function proposedPackedRefs(
  repository: RepositoryJudging,
  item: InsideChange | undefined,
): Promise<ReadonlyMap<string, PackedRef> | undefined> {
  if (item === undefined) return undefined
  const path = item.change.path
  if (item.change.type === 'delete') return new Map()
  if (item.change.type !== 'file') {
    repository.refused.set(path, `${path} must stay a file`)
    return undefined
  }
  const content = await repository.judged.read(path)
  if (content === undefined) {
    repository.refused.set(
      path,
      `${path} was not written back: it could not be read whole to be checked`,
    )
    return undefined
  }
  const parsed = parsePackedRefs(content, repository.format)
  if (parsed.type === 'refs') return parsed.refs
  repository.refused.set(path, `${path} was not written back: ${parsed.reason}`)
  return undefined
}

/** The host's refs, read on demand and once each. */
function hostRefs(repository: RepositoryJudging): {
  loose(name: string): Promise<Loose>
  packed(): Promise<Packed>
} {
  const { host, gitDir, format, maxFileBytes } = repository
  const loose = new Map<string, Promise<Loose>>()
  let packed: Promise<Packed> | undefined
  return {
    loose(name) {
      let pending = loose.get(name)
      if (pending === undefined) {
        pending = (async () => {
          const path = `${gitDir}/${name}`
          if ((await host.kind(path)) !== 'file') return undefined
          const content = await host.read(path, MAX_LOOSE_REF_BYTES)
          return (content === undefined ? undefined : parseLooseRef(content, format)) ?? 'broken'
        })()
        loose.set(name, pending)
      }
      return pending
    },
    packed() {
      packed ??= (async () => {
        const path = `${gitDir}/packed-refs`
        if ((await host.kind(path)) !== 'file') return new Map()
        const content = await host.read(path, maxFileBytes)
        if (content === undefined) return 'unreadable'
        const parsed = parsePackedRefs(content, format)
        // One git cannot read already hides every ref; it holds nothing to keep.
        return parsed.type === 'refs' ? parsed.refs : new Map()
      })()
      return packed
    },
  }
}

/** The loose refs each change removes: a deleted file, a folder deleted, a file made a folder. */
async function refsGone(
  repository: RepositoryJudging,
  inside: readonly InsideChange[],
): Promise<Map<string, InsideChange[]>> {
  const { host, gitDir } = repository
  const gone = new Map<string, InsideChange[]>()
  const add = (name: string, item: InsideChange): void => {
    if (isListedRefName(name)) gone.set(name, [...(gone.get(name) ?? []), item])
  }
  for (const item of inside) {
    const { change, inner } = item
    if (inner !== 'refs' && gitEntryKind(inner) !== 'ref') continue
    if (change.type !== 'delete' && change.type !== 'directory') continue
    const before = await host.kind(change.path)
    if (before === 'file') add(inner, item)
    else if (before === 'directory' && change.type === 'delete') {
      const folders = [inner]
      while (folders.length > 0) {
        const folder = folders.pop() as string
        for (const entry of await host.list(`${gitDir}/${folder}`)) {
          const name = `${folder}/${entry.name}`
          if (entry.type === 'directory') folders.push(name)
          else if (entry.type === 'file') add(name, item)
        }
      }
    }
  }
  return gone
}

/** Whether `inner` is `HEAD` or another `*_HEAD` file git writes (ORIG_HEAD, MERGE_HEAD, …). */
function isPseudoRef(inner: string): boolean {
  return inner === 'HEAD' || /^[A-Z][A-Z_]*_HEAD$/.test(inner)
}

/**
 * `HEAD` and the `*_HEAD` files hold what git writes there: a ref (FETCH_HEAD: one
 * `<id>\t…` line per ref fetched; MERGE_HEAD: one id per line). A `HEAD` git cannot read makes
 * the folder no repository to git; a detached `HEAD` must name an object the repository holds.
 */
async function judgePseudoRefs(
  repository: RepositoryJudging,
  inside: readonly InsideChange[],
  newObjects: ReadonlySet<string>,
): Promise<void> {
  const { refused, format } = repository
  const length = OBJECT_ID_HEX_LENGTH[format]
  for (const { change, inner } of inside) {
    if (!isPseudoRef(inner)) continue
    const path = change.path
    if (inner === 'HEAD' && change.type === 'delete') {
      refused.set(path, `${path} was not deleted: a repository needs its HEAD`)
      continue
    }
    if (change.type !== 'file') {
      if (change.type !== 'delete') refused.set(path, `${path} must stay a file`)
      continue
    }
    const content = await repository.judged.read(path)
    const text = content?.toString('latin1')
    const lines = text?.endsWith('\n') === true ? text.slice(0, -1).split('\n') : undefined
    const readable =
      content === undefined
        ? false
        : inner === 'FETCH_HEAD'
          ? text === '' ||
            (lines?.every(
              (line) => isObjectId(line.slice(0, length), format) && line[length] === '\t',
            ) ??
              false)
          : inner === 'MERGE_HEAD'
            ? (lines?.every((line) => isObjectId(line, format)) ?? false)
            : parseLooseRef(content, format) !== undefined
    if (!readable) {
      refused.set(
        path,
        `${path} was not written back: git would not read it (it holds a ${length}-digit object id and a newline, or "ref: refs/…" and a newline${inner === 'HEAD' ? '; with a HEAD git cannot read, the folder is no repository to git' : ''})`,
      )
      continue
    }
    const value =
      inner === 'HEAD' && content !== undefined ? parseLooseRef(content, format) : undefined
    if (value?.type !== 'object' || newObjects.has(value.id)) continue
    const missing = await repository.host.missingObjects(repository.gitDir, [value.id], format)
    if (missing.has(value.id)) {
      refused.set(
        path,
        `${path} was not written back: it points at ${value.id}, an object this repository does not hold`,
      )
    }
  }
}
