/**
 * @module jail/fd-hygiene
 * A process may inherit descriptors without close-on-exec from whoever started it; each child
 * would inherit them in turn and a jailed program could use them (jail-attack-classes §20). Before the
 * first jail starts, such descriptors above 2 are closed. Node's own are all close-on-exec.
 */
import { closeSync, readdirSync, readFileSync } from 'node:fs'

const O_CLOEXEC = 0o2000000

/**
 * Closes inherited descriptors above 2 that lack close-on-exec, except Node's IPC channel.
 * Returns the numbers closed. Idempotent; a no-op where /proc is missing.
 */
export function closeInheritedDescriptors(): number[] {
  const keep = new Set<number>([ipcChannelDescriptor()].filter((fd) => fd !== undefined))
  let names: string[]
  try {
    names = readdirSync('/proc/self/fd')
  } catch {
    return []
  }
  const closed: number[] = []
  for (const name of names) {
    const fd = Number(name)
    if (!Number.isInteger(fd) || fd <= 2 || keep.has(fd)) continue
    let info: string
    try {
      info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
    } catch {
      continue // the descriptor that listed the folder, already gone
    }
    const flags = /^flags:\s+([0-7]+)/m.exec(info)?.[1]
    if (flags === undefined || (parseInt(flags, 8) & O_CLOEXEC) !== 0) continue
    try {
      closeSync(fd)
      closed.push(fd)
    } catch {
      // already closed
    }
  }
  return closed
}

function ipcChannelDescriptor(): number | undefined {
  const channel = (process as { channel?: { fd?: number } }).channel
  return typeof channel?.fd === 'number' ? channel.fd : undefined
}
