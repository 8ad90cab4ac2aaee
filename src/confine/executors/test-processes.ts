/**
 * @module confine/executors/test-processes
 * For tests: whether processes are still alive (a zombie is not), found by pid or by a marker
 * argument in their command line.
 */
import { readdirSync, readFileSync } from 'node:fs'

/** True while `pid` runs (not a zombie). */
export function isAlive(pid: number): boolean {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return false
  }
  // The state follows the command name, which is in parentheses and may hold spaces.
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  return state !== 'Z' && state !== 'X'
}

/** Pids of live processes with `marker` among their arguments. */
export function processesWithArgument(marker: string): number[] {
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    const pid = Number(name)
    if (!Number.isInteger(pid)) continue
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
      if (argv.includes(marker) && isAlive(pid)) found.push(pid)
    } catch {
      // gone
    }
  }
  return found
}
