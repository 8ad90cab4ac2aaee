/**
 * @module jail/process-tree
 * How many processes run below a host process, read from /proc by the host itself: what a
 * jail still holds, whatever the programs inside it say.
 */
import fs from 'node:fs'

/** Counts the live descendants of `pid` (zombies included until reaped). */
export function countDescendants(pid: number): number {
  const childrenOf = fs.existsSync(`/proc/${process.pid}/task/${process.pid}/children`)
    ? childrenFromTasks
    : childrenFromParents()
  let count = 0
  const pending = [pid]
  for (let parent = pending.pop(); parent !== undefined; parent = pending.pop()) {
    for (const child of childrenOf(parent)) {
      count++
      pending.push(child)
    }
  }
  return count
}

/** The children of every thread of `pid` (CONFIG_PROC_CHILDREN). */
function childrenFromTasks(pid: number): number[] {
  const children: number[] = []
  try {
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      const listed = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8')
      for (const child of listed.split(' ')) if (child.trim() !== '') children.push(Number(child))
    }
  } catch {
    // ended meanwhile
  }
  return children
}

/** Without the children files: every process's parent, from /proc/PID/stat. */
function childrenFromParents(): (pid: number) => number[] {
  const byParent = new Map<number, number[]>()
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    let stat: string
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8')
    } catch {
      continue
    }
    // The name in parentheses may hold anything; the parent is the second field after it.
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    byParent.set(parent, [...(byParent.get(parent) ?? []), Number(name)])
  }
  return (pid) => byParent.get(pid) ?? []
}
