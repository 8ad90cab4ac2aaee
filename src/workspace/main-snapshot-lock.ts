/**
 * @module workspace/main-snapshot-lock
 * One look at main at a time among all the processes on one state folder. A look writes main's
 * index (`main.index`, shared: it is git's stat cache, and a process's first look is cheap only
 * because another left it current) and moves `refs/eitri/main`; two processes doing both at
 * once lose git's index lock or the reference's compare-and-swap. The lock is a reference-style
 * lock of the history repository (`history.git/eitri-main-snapshot.lock`) made by
 * `git/ref-lock.ts`: its owner record names the process, and a lock whose owner surely ended
 * (killed while holding it) is taken over. It is held only around git on main's index and the
 * move of main's reference, never around a watcher, the network or a caller. See
 * docs/decisions/0028-main-snapshot-lock.md.
 */
import fs from 'node:fs'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { EitriError } from '../errors/eitri-error.ts'
import { dropRefLockAsync, takeRefLockAsync } from './git/ref-lock.ts'

/** The lock's name, as a reference's would be (no slash, no dot: see ref-lock's record names). */
const LOCK_NAME = 'eitri-main-snapshot'

/**
 * How long a look waits for another process's look before failing: far above any look of a
 * sane workspace, still a bound, so a stopped (not killed) holder fails a call instead of
 * hanging it.
 */
export const MAIN_LOCK_WAIT_MS = 120_000

/** The lock file of main's looks in the history repository `gitDir`. */
export function mainSnapshotLockFile(gitDir: string): string {
  return path.join(gitDir, `${LOCK_NAME}.lock`)
}

/**
 * Runs `work` holding main's snapshot lock of `gitDir`, waiting (polling, with a short
 * growing pause) while another live process holds it; the lock is dropped whatever `work` does.
 *
 * @throws EitriError `timeout` when another process held it for over `waitMs`.
 */
export async function withMainSnapshotLock<T>(
  gitDir: string,
  work: () => Promise<T>,
  waitMs = MAIN_LOCK_WAIT_MS,
): Promise<T> {
  const deadline = Date.now() + waitMs
  let pause = 1
  for (;;) {
    const lock = await takeRefLockAsync(gitDir, LOCK_NAME)
    if (lock !== undefined) {
      if (lock.takenOver === true) dropAbandonedIndexLock(gitDir)
      try {
        return await work()
      } finally {
        await dropRefLockAsync(lock)
      }
    }
    if (Date.now() >= deadline)
      throw new EitriError(
        'timeout',
        `main's snapshot lock ${mainSnapshotLockFile(gitDir)} was held by another process for over ${Math.round(waitMs / 1000)} s; try again, and if no eitri process on this state is running, remove that file`,
      )
    await sleep(pause + Math.random() * pause)
    pause = Math.min(pause * 2, 50)
  }
}

/**
 * After the snapshot lock was taken over from a holder killed while holding it: git's lock on
 * main's index (`main.index.lock`, beside the history repository) that holder's git left, if no
 * process has it open. Only eitri's processes run git on main's index, and only holding the
 * snapshot lock, so such a file is left from that holder; a git of it still running (its parent
 * killed alone) keeps it open and keeps it. Without this, every later snapshot failed on
 * git's "File exists" until a person removed the file.
 */
function dropAbandonedIndexLock(gitDir: string): void {
  const indexLock = path.join(path.dirname(gitDir), 'main.index.lock')
  if (!fs.existsSync(indexLock) || openedByAnyProcess(fs.realpathSync(indexLock))) return
  fs.rmSync(indexLock, { force: true })
}

/** Whether any process this one may look at has `file` open (its /proc/PID/fd links). */
function openedByAnyProcess(file: string): boolean {
  let processes: string[]
  try {
    processes = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))
  } catch {
    return true // nothing to look at: keep the file, as before
  }
  for (const pid of processes) {
    let descriptors: string[]
    try {
      descriptors = fs.readdirSync(`/proc/${pid}/fd`)
    } catch {
      continue // ended, or not ours to look at
    }
    for (const descriptor of descriptors) {
      try {
        if (fs.readlinkSync(`/proc/${pid}/fd/${descriptor}`) === file) return true
      } catch {
        // closed meanwhile
      }
    }
  }
  return false
}
