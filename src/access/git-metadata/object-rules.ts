/**
 * @module access/git-metadata/object-rules
 * Objects must be what they claim, and are written once. git finds an object by its id and
 * believes the file it finds — packs before loose objects — so a file that maps a known id to
 * other content rewrites history without touching a ref. A new loose object must hash to its
 * name (checked here); a new pack and its index must be what git itself makes of the pack
 * (checked by git); an existing object file is never deleted or changed; and the files git
 * derives from the objects and then trusts about history (commit graphs, multi-pack indexes,
 * bitmaps) never come back from the jail: git rebuilds them.
 */
import { objectFileKind } from './git-place.ts'
import type { InsideChange, RepositoryJudging } from './history-context.ts'
import { looseObjectProblem, type InflateBudget } from './loose-object.ts'
import { packIndexIds } from './pack-index.ts'
import { isObjectId } from './git-ref-format.ts'

/** Why a derived file is left out: reported once, not as a failure. */
export const DERIVED_FILE_REASON =
  'not brought back: git derives it from the objects and trusts what it says about history (parents, reachability), so the workspace’s git rebuilds its own (git commit-graph write, git multi-pack-index write) rather than take this one'

/**
 * Judges the changes below `objects/` of one repository folder. Answers the ids of the new
 * objects it accepted (refs in the same change may point at them).
 */
export async function judgeObjects(
  repository: RepositoryJudging,
  inside: readonly InsideChange[],
  budget: InflateBudget,
): Promise<Set<string>> {
  const { host, refused, unchanged, dropped } = repository
  const accepted = new Set<string>()
  const packs = new Map<string, { pack?: InsideChange; index?: InsideChange }>()
  for (const item of inside) {
    const { change, inner } = item
    if (inner !== 'objects' && !inner.startsWith('objects/')) continue
    const path = change.path
    const kind = objectFileKind(inner)
    const before = await host.kind(path)
    if (change.type === 'directory') {
      if (before !== undefined && before !== 'directory')
        refused.set(
          path,
          `${path} was not overwritten: git objects are written once and never changed`,
        )
      continue
    }
    if (change.type === 'delete') {
      // Derived files are caches: the host's git works without them and rebuilds them.
      if (before !== undefined && kind !== 'derived' && kind !== 'pack-list') {
        refused.set(
          path,
          `${path} was not deleted: git objects are kept once written (history cannot be lost from the jail)`,
        )
      }
      continue
    }
    if (change.type !== 'file') continue // links inside a repository folder are refused for all
    if (kind === 'derived') {
      dropped.set(path, DERIVED_FILE_REASON)
      continue
    }
    if (before !== undefined) {
      if (kind === 'pack-list' && before === 'file') continue
      if (before === 'file' && (await repository.judged.sameAsHost(path))) unchanged.add(path)
      else
        refused.set(
          path,
          `${path} was not overwritten: git objects are written once and never changed`,
        )
      continue
    }
    if (kind === 'loose') {
      const id = inner.slice('objects/'.length).replace('/', '')
      const problem = await looseProblem(repository, path, id, budget)
      if (problem === undefined) accepted.add(id)
      else refused.set(path, `${path} was not written back: ${problem}`)
    } else if (kind === 'pack' || kind === 'pack-index') {
      const stem = path.slice(0, path.lastIndexOf('.'))
      const pair = packs.get(stem) ?? {}
      packs.set(stem, kind === 'pack' ? { ...pair, pack: item } : { ...pair, index: item })
    } else if (kind === undefined) {
      refused.set(
        path,
        `${path} was not written back: git keeps no file of that name among its objects (only loose objects, packs with their indexes and .keep files come back)`,
      )
    }
  }
  for (const [stem, pair] of packs) {
    for (const id of await judgePack(repository, stem, pair)) accepted.add(id)
  }
  return accepted
}

async function looseProblem(
  repository: RepositoryJudging,
  path: string,
  id: string,
  budget: InflateBudget,
): Promise<string | undefined> {
  if (!isObjectId(id, repository.format)) {
    return `its name is no object id of this repository (${repository.format}), so git would never read it`
  }
  const compressed = await repository.judged.read(path)
  if (compressed === undefined) return 'it could not be read whole to be checked'
  const problem = await looseObjectProblem(compressed, id, repository.format, budget)
  return problem === undefined ? undefined : `it is not the object its name claims: ${problem}`
}

/**
 * A new pack, its new index, or both: checked together with the other half (new, or the
 * host's). A half without the other is left alone (git uses a pack only through its index,
 * and an index only beside its pack), and is checked when the other half arrives.
 */
async function judgePack(
  repository: RepositoryJudging,
  stem: string,
  pair: { pack?: InsideChange; index?: InsideChange },
): Promise<string[]> {
  const { host, judged, refused, format, gitDir, maxFileBytes } = repository
  const half = async (
    change: InsideChange | undefined,
    path: string,
  ): Promise<Buffer | undefined | 'absent'> => {
    if (change !== undefined) return judged.read(path)
    if ((await host.kind(path)) === undefined) return 'absent'
    return host.read(path, maxFileBytes)
  }
  const packPath = `${stem}.pack`
  const indexPath = `${stem}.idx`
  const pack = await half(pair.pack, packPath)
  const index = await half(pair.index, indexPath)
  const refuse = (why: string): string[] => {
    for (const change of [pair.pack, pair.index])
      if (change !== undefined)
        refused.set(change.change.path, `${change.change.path} was not written back: ${why}`)
    return []
  }
  if (pack === 'absent' || index === 'absent') return []
  if (pack === undefined || index === undefined)
    return refuse('the pack or its index could not be read whole to be checked')
  const check = await host.verifyPack(gitDir, pack, index, format)
  if (!check.ok) return refuse(`the pack and its index are not what they claim: ${check.reason}`)
  return packIndexIds(index, format)
}
