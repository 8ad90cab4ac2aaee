/**
 * @module workspace/owner-paths
 * The walks a root caller's folder layer makes before it acts on a path (decision 0060): every
 * folder on the way entered as the workspace's owner would enter it, and a change judged as
 * the owner's kernel would judge it. Each answer is `owner-access.ts`'s decision.
 */
import { lstatSync, realpathSync, type Stats } from 'node:fs'
import path from 'node:path'
import { ownerMay, ownerMayReplace, ownerRefusal, type WorkspaceOwner } from './owner-access.ts'

/**
 * Whether every folder on the way to `relativePath` (its own entry is not judged) is there;
 * false when one is missing or a file (the path is then not there). A folder the owner may not
 * enter is refused; a link on the way (the policy hands the folder layer link-free paths, but
 * a caller may name one) is judged as the kernel walks it: every folder of where it leads,
 * which must lie inside the workspace. `entered`: real folders (no link) already judged
 * enterable, skipped, and those judged here added (the caller keeps it for one turn only).
 *
 * @throws EitriError `permission_denied` naming the folder.
 */
export function ownerEnters(
  root: string,
  owner: WorkspaceOwner,
  relativePath: string,
  need: 'read' | 'write',
  entered: Set<string> = new Set(),
): boolean {
  const parts = relativePath === '' ? [] : relativePath.split('/')
  let folder = ''
  for (let index = 0; index < parts.length; index++) {
    if (index > 0) folder = folder === '' ? (parts[0] as string) : `${folder}/${parts[index - 1]}`
    if (entered.has(folder)) continue
    const stat = lstatAt(root, folder)
    if (stat?.isSymbolicLink() === true) {
      if (!enterLinked(root, owner, relativePath, folder, need)) return false
      continue
    }
    if (stat === undefined || !stat.isDirectory()) return false
    if (!ownerMay(owner, stat, 'search')) throw ownerRefusal(relativePath, need, { folder })
    entered.add(folder)
  }
  return true
}

/** {@link ownerEnters} through the link `link`: each real folder down to where it leads. */
function enterLinked(
  root: string,
  owner: WorkspaceOwner,
  relativePath: string,
  link: string,
  need: 'read' | 'write',
): boolean {
  let real: string
  try {
    real = realpathSync(hostPathOf(root, link))
  } catch {
    return false
  }
  const inside = path.relative(root, real)
  if (inside.startsWith('..') || path.isAbsolute(inside))
    throw ownerRefusal(relativePath, need, { folder: link })
  let folder = ''
  for (const part of ['', ...(inside === '' ? [] : inside.split(path.sep))]) {
    folder = part === '' ? folder : folder === '' ? part : `${folder}/${part}`
    const stat = lstatAt(root, folder)
    if (stat === undefined || !stat.isDirectory()) return false
    if (!ownerMay(owner, stat, 'search')) throw ownerRefusal(relativePath, need, { folder })
  }
  return true
}

/**
 * Refuses a change the owner could not make. `write`: a file's bytes, which the owner may
 * write in place or replace in its folder; `remove` (a link made over an entry too): the entry
 * replaced in its folder; `folder`: a folder made. A missing path needs its nearest folder
 * changeable, where the missing folders on the way are made.
 *
 * @throws EitriError `permission_denied` naming the path.
 */
export function assertOwnerMayChange(
  root: string,
  owner: WorkspaceOwner,
  relativePath: string,
  change: 'write' | 'remove' | 'folder',
): void {
  const parts = relativePath === '' ? [] : relativePath.split('/')
  let folder = lstatAt(root, '')
  let current = ''
  for (const [index, part] of parts.entries()) {
    if (folder === undefined || !folder.isDirectory()) return
    if (!ownerMay(owner, folder, 'search'))
      throw ownerRefusal(relativePath, 'write', { folder: current })
    const next = current === '' ? part : `${current}/${part}`
    const entry = lstatAt(root, next)
    if (entry === undefined) {
      if (!ownerMay(owner, folder, 'change')) throw ownerRefusal(relativePath, 'write')
      return
    }
    if (index === parts.length - 1) {
      // A folder named for a file's bytes is refused for what it is, below.
      if (change !== 'remove' && entry.isDirectory()) return
      const allowed =
        (change === 'write' && entry.isFile() && ownerMay(owner, entry, 'write')) ||
        ownerMayReplace(owner, folder, entry)
      if (!allowed) throw ownerRefusal(relativePath, 'write')
      return
    }
    folder = entry
    current = next
  }
}

function hostPathOf(root: string, relativePath: string): string {
  return relativePath === '' ? root : path.join(root, relativePath)
}

function lstatAt(root: string, relativePath: string): Stats | undefined {
  return lstatSync(hostPathOf(root, relativePath), { throwIfNoEntry: false })
}
