/**
 * @module confine/child/call-processes
 * Ends every process a confined call started. Killing the child's process group reaches what
 * stayed in it; a descendant that left the group (`setsid`, a double fork) still carries the
 * call's marker in its environment, so a sweep of /proc finds and kills it too. Nothing a call
 * started outlives it.
 */
import { readdirSync, readFileSync } from 'node:fs'

/** The environment name that marks every process of one call; its value is fresh per call. */
export const CALL_MARKER_VARIABLE = 'EITRI_CONFINED_CALL'

/** Sweeps at most this many times: a process forking while it is swept is found next time. */
const MAX_SWEEPS = 50

/**
 * SIGKILLs the process group `groupId` and every process whose environment holds
 * `CALL_MARKER_VARIABLE=token`, until a sweep finds none. Answers the pids the sweep killed
 * (the group's members are not listed). Without /proc only the group is killed.
 */
export function killCallProcesses(groupId: number, token: string): number[] {
  try {
    process.kill(-groupId, 'SIGKILL')
  } catch {
    // The group is already gone.
  }
  const killed: number[] = []
  for (let sweep = 0; sweep < MAX_SWEEPS; sweep++) {
    const found = markedProcesses(token)
    if (found.length === 0) break
    for (const pid of found) {
      try {
        process.kill(pid, 'SIGKILL')
        killed.push(pid)
      } catch {
        // It ended on its own.
      }
    }
  }
  return killed
}

/** Pids of live processes (zombies have no environment left) marked with `token`. */
export function markedProcesses(token: string): number[] {
  const entry = Buffer.from(`${CALL_MARKER_VARIABLE}=${token}\0`)
  let names: string[]
  try {
    names = readdirSync('/proc')
  } catch {
    return []
  }
  const found: number[] = []
  for (const name of names) {
    const pid = Number(name)
    if (!Number.isInteger(pid) || pid === process.pid) continue
    let environment: Buffer
    try {
      environment = readFileSync(`/proc/${pid}/environ`)
    } catch {
      continue // gone, or another user's
    }
    const at = environment.indexOf(entry)
    if (at === 0 || (at > 0 && environment[at - 1] === 0)) found.push(pid)
  }
  return found
}
