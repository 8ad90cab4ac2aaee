/**
 * @module workspace/owner-access
 * What the workspace's owner may do to an entry, decided from its owner, group and mode bits
 * as the kernel decides for the jail (decision 0060). A root caller's jail runs programs as
 * the workspace's owner, with no capability, on a bind where only the owner's user and group
 * are mapped; the host's file tools and snapshots, which run as root, ask this first so they
 * reach exactly what that jail reaches. A caller that is not root never asks: the kernel
 * decides for it.
 */
import { lstatSync } from 'node:fs'
import { EitriError } from '../errors/eitri-error.ts'

/** Whose access a root caller's host tools take: the workspace folder's user and group. */
export interface WorkspaceOwner {
  readonly uid: number
  readonly gid: number
}

/** What the decision reads of an entry: `lstat`'s owner, group and mode. */
export interface OwnedEntry {
  readonly uid: number
  readonly gid: number
  readonly mode: number
}

/**
 * What is asked of an entry: `read` (a file's bytes, a folder's names), `write` (a file's
 * bytes in place), `search` (a folder entered on the way to a path), `change` (a folder whose
 * entries are created, removed or renamed: write and search).
 */
export type OwnerNeed = 'read' | 'write' | 'search' | 'change'

const NEED_BITS: Record<OwnerNeed, number> = { read: 4, write: 2, search: 1, change: 3 }

/**
 * Whether the owner may do `need` to `entry`: the owner's bits when the entry is the owner's,
 * else the group's when its group is the owner's group, else the others' (no supplementary
 * group, no ACL, no capability: the jail holds none of them).
 *
 * @example
 * ownerMay({ uid: 1000, gid: 1000 }, { uid: 1001, gid: 1001, mode: 0o600 }, 'read') // false
 */
export function ownerMay(owner: WorkspaceOwner, entry: OwnedEntry, need: OwnerNeed): boolean {
  const shift = entry.uid === owner.uid ? 6 : entry.gid === owner.gid ? 3 : 0
  const bits = (entry.mode >> shift) & 7
  const wanted = NEED_BITS[need]
  return (bits & wanted) === wanted
}

/**
 * Whether the owner may remove `entry` from `folder`, or rename another entry over it: the
 * folder must be changeable, and the entry's user and group both the owner's, as in the jail,
 * whose bind maps only those (the kernel refuses to remove or replace an entry of an unmapped
 * id, so a sticky folder's rule, the entry's or the folder's owner, holds too).
 */
export function ownerMayReplace(
  owner: WorkspaceOwner,
  folder: OwnedEntry,
  entry: OwnedEntry,
): boolean {
  return ownerMay(owner, folder, 'change') && entry.uid === owner.uid && entry.gid === owner.gid
}

/**
 * The owner whose access a process's host tools take on the folder at `root`: its user and
 * group when the process is root, none otherwise (the kernel already holds such a caller to
 * its own access, and the tools pay nothing more).
 */
export function actingOwner(root: string): WorkspaceOwner | undefined {
  if (process.geteuid?.() !== 0) return undefined
  const stat = lstatSync(root)
  return { uid: stat.uid, gid: stat.gid }
}

/**
 * The refusal of a path the owner may not reach, as a tool shows it: the path, what was
 * refused and why. `folder` names the folder on the way that cannot be entered, if that is why;
 * `caller` says the kernel refused eitri's own user (a caller that is not root), not the rule.
 */
export function ownerRefusal(
  relativePath: string,
  need: 'read' | 'write',
  options: { folder?: string | undefined; caller?: boolean } = {},
): EitriError {
  const shown = relativePath === '' ? '.' : relativePath
  const who = options.caller === true ? "eitri's user" : "the workspace's owner"
  const why =
    options.folder === undefined
      ? `${who} may not ${need} it (its owner, group or mode bits)`
      : `${who} may not enter the folder ${options.folder === '' ? '.' : options.folder}`
  return new EitriError(
    'permission_denied',
    `Permission denied: ${shown}: ${why}. eitri's file tools reach only what the workspace's owner (and so the jail) could; ask the person to change the owner or mode if it is needed.`,
    { data: { path: shown } },
  )
}

/** Whether an error is the kernel's own refusal (`EACCES`) of a caller that is not root. */
export function isAccessRefused(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'EACCES'
}
