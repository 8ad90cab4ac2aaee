/**
 * @module access/git-metadata/history-rules
 * What a change may do to an existing repository's history, defined by meaning rather than by
 * file: no ref present before disappears (loose and packed refs are one set, so a rewritten
 * `packed-refs` counts), reflogs only grow (the old text stays their prefix), and objects are
 * written once (never deleted, never overwritten; the files git derives from them, such as the
 * commit graph, may be rewritten). Ref moves are allowed: a snapshot records them.
 */
import { gitEntryKind, gitPlaceByName } from './git-place.ts'

/** A change to one path, as the history rules see it. */
export interface HistoryChange {
  readonly path: string
  readonly type: 'file' | 'directory' | 'symlink' | 'delete'
}

/** Reads what is on the host now (before the changes). */
export interface HistoryHost {
  kind(path: string): Promise<'file' | 'directory' | 'symlink' | 'other' | undefined>
  /** A file's content, at most `maxBytes` (undefined when missing or larger). */
  read(path: string, maxBytes: number): Promise<Buffer | undefined>
  /** Names in a folder (none when missing). */
  list(path: string): Promise<{ name: string; type: 'file' | 'directory' | 'symlink' | 'other' }[]>
}

/** Reads what a change would put at a path. */
export interface HistoryProposal {
  /** The new content of a changed file, at most `maxBytes` (undefined when larger). */
  read(path: string, maxBytes: number): Promise<Buffer | undefined>
  /** Whether the new content of a changed file is byte for byte what the host holds. */
  sameAsHost(path: string): Promise<boolean>
}

/** What the rules found: changes refused (with why) and changes that change nothing. */
export interface HistoryJudgement {
  readonly refused: Map<string, string>
  readonly unchanged: Set<string>
}

/** A change that would change nothing (an object written again, byte for byte). */
const UNCHANGED = Symbol('unchanged')

/** Reflogs and packed-refs larger than this are not compared (and so not accepted). */
const MAX_METADATA_BYTES = 64 * 1024 * 1024

/** Files below objects/ that git derives from the objects and rewrites at will. */
function isDerivedObjectFile(inner: string): boolean {
  return (
    inner === 'objects/info/packs' ||
    inner === 'objects/info/commit-graph' ||
    inner.startsWith('objects/info/commit-graphs/') ||
    inner === 'objects/pack/multi-pack-index' ||
    /^objects\/pack\/multi-pack-index-[0-9a-f]+\.(bitmap|rev)$/.test(inner) ||
    inner.endsWith('.lock')
  )
}

/**
 * Judges the changes that fall inside existing repository folders (`.git` folders here; the
 * caller has already refused what the path policy refuses). Changes elsewhere are ignored.
 */
export async function judgeHistory(
  changes: readonly HistoryChange[],
  host: HistoryHost,
  proposal: HistoryProposal,
): Promise<HistoryJudgement> {
  const refused = new Map<string, string>()
  const unchanged = new Set<string>()
  const byRepository = new Map<string, { change: HistoryChange; inner: string }[]>()
  for (const change of changes) {
    const place = gitPlaceByName(change.path)
    if (place.type !== 'inside') continue
    const list = byRepository.get(place.gitDir) ?? []
    list.push({ change, inner: place.inner })
    byRepository.set(place.gitDir, list)
  }
  for (const [gitDir, inside] of byRepository) {
    if ((await host.kind(gitDir)) !== 'directory') continue // a new repository: not the history's
    for (const { change, inner } of inside) {
      const reason = await judgeOne(change, inner, host, proposal)
      if (reason === UNCHANGED) unchanged.add(change.path)
      else if (reason !== undefined) refused.set(change.path, reason)
    }
    await judgeRefs(gitDir, inside, host, proposal, refused)
    refuseFoldersAbove(inside, refused)
  }
  return { refused, unchanged }
}

async function judgeOne(
  change: HistoryChange,
  inner: string,
  host: HistoryHost,
  proposal: HistoryProposal,
): Promise<string | typeof UNCHANGED | undefined> {
  const kind = gitEntryKind(inner)
  const before = await host.kind(change.path)
  if (kind === 'object') {
    if (isDerivedObjectFile(inner) || before === undefined) {
      return change.type === 'symlink' ? `${change.path}: objects are files, not links` : undefined
    }
    if (change.type === 'directory' && before === 'directory') return undefined
    if (change.type === 'file' && before === 'file' && (await proposal.sameAsHost(change.path)))
      return UNCHANGED
    return change.type === 'delete'
      ? `${change.path} was not deleted: git objects are kept once written (history cannot be lost from the jail)`
      : `${change.path} was not overwritten: git objects are written once and never changed`
  }
  if (kind === 'reflog') {
    if (before === undefined || before === 'directory') return undefined
    if (change.type === 'delete')
      return `${change.path} was not deleted: reflogs only grow (they are how lost commits are found again)`
    if (change.type !== 'file') return `${change.path}: a reflog must stay a file`
    const old = await host.read(change.path, MAX_METADATA_BYTES)
    const next = await proposal.read(change.path, MAX_METADATA_BYTES)
    if (old === undefined || next === undefined || !startsWith(next, old))
      return `${change.path} was not written back: reflogs only grow, and this one lost lines`
    return undefined
  }
  if (inner === 'HEAD' && change.type === 'delete')
    return `${change.path} was not deleted: a repository needs its HEAD`
  return undefined
}

/**
 * No ref present on the host may be missing afterwards, counting loose and packed refs as one
 * set: a loose ref may go only into packed-refs, and packed-refs may drop a ref only if it is
 * loose afterwards.
 */
async function judgeRefs(
  gitDir: string,
  inside: readonly { change: HistoryChange; inner: string }[],
  host: HistoryHost,
  proposal: HistoryProposal,
  refused: Map<string, string>,
): Promise<void> {
  const refChanges = inside.filter(({ inner }) => gitEntryKind(inner) === 'ref')
  const packedChange = inside.find(({ inner }) => inner === 'packed-refs')
  if (refChanges.every(({ change }) => change.type !== 'delete') && packedChange === undefined)
    return
  const hostLoose = await looseRefs(host, gitDir)
  const hostPackedText = await host.read(`${gitDir}/packed-refs`, MAX_METADATA_BYTES)
  const hostPacked = packedRefs(hostPackedText)
  const before = new Set([...hostLoose, ...hostPacked])
  let packedAfter = hostPacked
  if (packedChange !== undefined) {
    if (packedChange.change.type === 'delete') packedAfter = new Set()
    else if (packedChange.change.type === 'file') {
      const text = await proposal.read(packedChange.change.path, MAX_METADATA_BYTES)
      if (text === undefined) {
        refused.set(packedChange.change.path, `${packedChange.change.path} is too large to check`)
      } else packedAfter = packedRefs(text)
    } else refused.set(packedChange.change.path, `${packedChange.change.path} must stay a file`)
  }
  // Twice: refusing packed-refs brings its old list back, which may refuse loose deletions.
  for (let round = 0; round < 2; round++) {
    const effectivePacked =
      packedChange !== undefined && refused.has(packedChange.change.path) ? hostPacked : packedAfter
    const looseAfter = new Set(hostLoose)
    for (const { change, inner } of refChanges) {
      if (change.type === 'delete') {
        const lost = [...hostLoose].filter(
          (name) => within(name, inner) && !effectivePacked.has(name),
        )
        if (lost.length > 0) {
          refused.set(
            change.path,
            `${change.path} was not deleted: no ref may disappear from the jail (${lost.slice(0, 3).join(', ')} would be lost); snapshots keep ref moves, not deletions`,
          )
        }
        if (!refused.has(change.path)) {
          for (const name of [...looseAfter]) if (within(name, inner)) looseAfter.delete(name)
        }
      } else if (change.type === 'file') looseAfter.add(inner)
    }
    if (packedChange === undefined || refused.has(packedChange.change.path)) continue
    const lost = [...before].filter((name) => !looseAfter.has(name) && !packedAfter.has(name))
    if (lost.length > 0) {
      refused.set(
        packedChange.change.path,
        `${packedChange.change.path} was not written back: it would lose ${lost.slice(0, 5).join(', ')}${lost.length > 5 ? ', …' : ''} (no ref may disappear from the jail)`,
      )
    }
  }
}

/** Folder deletions are refused when something below them was kept. */
function refuseFoldersAbove(
  inside: readonly { change: HistoryChange }[],
  refused: Map<string, string>,
): void {
  for (const { change } of inside) {
    if (change.type !== 'delete' || refused.has(change.path)) continue
    const kept = [...refused.keys()].find((path) => path.startsWith(`${change.path}/`))
    if (kept !== undefined)
      refused.set(change.path, `${change.path} was not deleted: it holds ${kept}, which was kept`)
  }
}

/** Every loose ref of the host's repository folder, as `refs/…` names. */
async function looseRefs(host: HistoryHost, gitDir: string): Promise<Set<string>> {
  const names = new Set<string>()
  const folders = ['refs']
  while (folders.length > 0) {
    const folder = folders.pop() as string
    for (const entry of await host.list(`${gitDir}/${folder}`)) {
      const name = `${folder}/${entry.name}`
      if (entry.type === 'directory') folders.push(name)
      else if (entry.type === 'file' && !entry.name.endsWith('.lock')) names.add(name)
    }
  }
  return names
}

/** The ref names in a packed-refs text (`OID NAME` lines; `^OID` peel lines and comments skipped). */
export function packedRefs(text: Buffer | undefined): Set<string> {
  const names = new Set<string>()
  if (text === undefined) return names
  for (const line of text.toString('utf8').split('\n')) {
    const match = /^[0-9a-f]{40,64} (\S+)$/.exec(line.trimEnd())
    if (match?.[1] !== undefined) names.add(match[1])
  }
  return names
}

function startsWith(text: Buffer, prefix: Buffer): boolean {
  return text.byteLength >= prefix.byteLength && text.subarray(0, prefix.byteLength).equals(prefix)
}

function within(name: string, folder: string): boolean {
  return name === folder || name.startsWith(`${folder}/`)
}
