/**
 * @module util/owned-folders
 * The names of eitri's folders in the temporary folder: each names its kind and the process
 * that owns it (its pid and that process's start time, so a pid the system gave to another
 * process since is not mistaken for the owner). The sweep of folders whose owner is gone is
 * jail/temporary-folders.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/** The kinds of folder eitri makes in the temporary folder and sweeps. */
export type TemporaryKind =
  'jail' | 'mirror' | 'layers' | 'drive' | 'mounts' | 'confine' | 'confine-tmp' | 'execute-only'

/**
 * A process's start time, in clock ticks since boot (field 22 of /proc/PID/stat); undefined
 * when no such process runs (or /proc does not say).
 */
export function processStartTime(pid: number | 'self'): string | undefined {
  let stat: string
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // The command name (field 2) may hold spaces and parentheses: count from its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // fields[0] is field 3 (the state); a zombie has ended, whatever its parent does.
  if (fields[0] === 'Z' || fields[0] === 'X') return undefined
  const start = fields[19]
  return start !== undefined && /^\d+$/.test(start) ? start : undefined
}

/**
 * Whether the process `pid` that started at clock tick `start` has surely ended: its `/proc`
 * entry is gone, or is a zombie, or names another start (its pid was reused). Any other error
 * reading it (too many open files, a `/proc` mounted with `hidepid`) tells nothing, so the
 * answer is no: a claim or a lock is never taken from a process that may live.
 */
export function processEnded(pid: number, start: string, readStat = readProcStat): boolean {
  let stat: string
  try {
    stat = readStat(pid)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT'
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  if (fields[0] === 'Z' || fields[0] === 'X') return true
  return fields[19] !== start
}

function readProcStat(pid: number): string {
  return fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
}

let ownTag: string | undefined

/** `PID.STARTTIME` of this process. */
export function ownerTag(): string {
  ownTag ??= `${process.pid}.${processStartTime('self') ?? '0'}`
  return ownTag
}

/** The `mkdtemp` prefix of a folder of `kind` owned by this process, under `base`. */
export function ownedPrefix(kind: TemporaryKind, base: string = os.tmpdir()): string {
  return path.join(base, `eitri-${kind}-${ownerTag()}-`)
}
