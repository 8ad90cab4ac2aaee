/**
 * @module jail/temporary-folders
 * eitri's folders in the temporary folder (the jail's support files and mirror, the drive's
 * copy, mount points, confined calls' scratch), named after the process that owns them, and
 * the sweep that removes those whose owner is gone.
 *
 * A process that exits removes its own folders; one killed outright (`kill -9`, the machine
 * losing power) cannot, so every eitri that starts sweeps: a folder whose owner no longer runs
 * is renamed to a name of the sweeper's own (one atomic step, so two eitris starting together
 * never both take it) and removed by `rm`, which walks the tree without following links even
 * while someone swaps its parts. Names are made by util/owned-folders.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ownerTag, processEnded, processStartTime } from '../util/owned-folders.ts'
import { jailIdentity } from '../bubblewrap/jail-identity.ts'

/** Folders being removed by a sweep carry this kind. */
const SWEPT = 'swept'

/** `eitri-KIND-PID.STARTTIME-XXXXXX`: the names the sweep considers, and only those. */
const OWNED_NAME =
  /^eitri-(jail|mirror|layers|drive|mounts|confine|confine-tmp|execute-only|swept)-(\d{1,10})\.(\d{1,20})-[A-Za-z0-9]{6}$/

const RM = ['/usr/bin/rm', '/bin/rm'].find((candidate) => fs.existsSync(candidate)) ?? 'rm'

/** Whether the process a folder name records still runs (the same process, not its pid's heir). */
function ownerRuns(pid: string, start: string): boolean {
  if (Number(pid) === process.pid) return start === processStartTime('self')
  if (!fs.existsSync('/proc/self/stat')) return true // no /proc: nothing can be told; keep
  return !processEnded(Number(pid), start)
}

/** What a sweep did. */
export interface Sweep {
  /** The folders taken (their original paths). */
  readonly swept: readonly string[]
  /**
   * Settles when `rm` has finished with them. It does not keep this process alive: `rm` goes on
   * if this process exits first.
   */
  readonly removed: Promise<void>
}

/**
 * Sweeps `base` (default: the temporary folder) of eitri's folders whose owner no longer runs.
 * Only names of eitri's own pattern, only real folders (never a link), only those owned by this
 * user or by the user this user's jails run as. Never throws: a folder it cannot take stays.
 */
export function sweepAbandonedFolders(base: string = os.tmpdir()): Sweep {
  const owners = new Set([process.geteuid?.() ?? -1, jailIdentity().uid])
  let names: string[]
  try {
    names = fs.readdirSync(base)
  } catch {
    return { swept: [], removed: Promise.resolve() }
  }
  const swept: string[] = []
  const taken: string[] = []
  for (const name of names) {
    const match = OWNED_NAME.exec(name)
    if (match === null) continue
    const [, , pid = '', start = ''] = match
    if (ownerRuns(pid, start)) continue
    const folder = path.join(base, name)
    try {
      const stat = fs.lstatSync(folder)
      if (!stat.isDirectory() || !owners.has(stat.uid)) continue
      const target = path.join(
        base,
        `eitri-${SWEPT}-${ownerTag()}-${randomBytes(3).toString('hex')}`,
      )
      // Whoever renames first takes it; the other finds it gone.
      fs.renameSync(folder, target)
      swept.push(folder)
      taken.push(target)
    } catch {
      continue
    }
  }
  return { swept, removed: removeFolders(taken) }
}

/**
 * Removes folders with `rm` (which walks a tree without following links, even while someone
 * swaps its parts), in a process of its own that outlives this one if need be. Never rejects.
 */
export function removeFolders(folders: readonly string[]): Promise<void> {
  if (folders.length === 0) return Promise.resolve()
  return new Promise((resolve) => {
    const child = spawn(RM, ['-rf', '--one-file-system', '--', ...folders], {
      stdio: 'ignore',
      detached: true,
    })
    child.once('error', () => resolve())
    child.once('exit', () => resolve())
    child.unref()
  })
}
