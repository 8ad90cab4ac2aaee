/**
 * @module tools/shell/format-run
 * How a finished command reads to a model: its output, its errors, its exit code.
 */
import type { ProgramMemory, ProgramRun } from '../../ports/program-session.ts'
import { networkNote } from '../../bubblewrap/network-note.ts'

/**
 * stdout, then stderr under a heading, then the exit code and anything not written back. A
 * jailed (`confined`) command that failed for want of the network says so, and what to do.
 */
export function formatRun(run: ProgramRun, options: { readonly confined: boolean }): string {
  const parts: string[] = []
  if (run.stdout !== '') parts.push(run.stdout.replace(/\n$/, ''))
  if (run.stderr !== '') parts.push(`stderr:\n${run.stderr.replace(/\n$/, '')}`)
  if (parts.length === 0)
    parts.push(run.timedOut ? '(no output before the timeout)' : '(no output)')
  if (!run.timedOut) parts.push(`[exit ${run.exitCode ?? `by signal ${run.signal ?? 'unknown'}`}]`)
  if (run.memory?.exceeded !== undefined) parts.push(memoryNote(run.memory))
  const network = options.confined ? networkNote(run) : undefined
  if (network !== undefined) parts.push(network)
  // Where output was dropped, a marker in the output itself says how much (output-window.mjs).
  for (const refused of run.refused ?? [])
    parts.push(`[not written back: ${refused.path}: ${refused.reason}]`)
  for (const kept of run.kept ?? []) parts.push(`[kept in the jail: ${kept.path}: ${kept.reason}]`)
  for (const hidden of run.hidden ?? [])
    parts.push(`[not shown in the jail: ${hidden.path}: ${hidden.reason}]`)
  return parts.join('\n\n')
}

/** Names the memory limit that stopped a command, what bounds it, and how to raise it. */
export function memoryNote(memory: ProgramMemory): string {
  const limit = formatSize(memory.limitBytes)
  const raise = `Make it use less memory, or raise jail.memoryBytes in eitri's configuration.`
  return memory.exceeded === 'oom-kill'
    ? `[stopped: used more than the ${limit} memory limit (all its processes together, a memory cgroup) and was killed. ${raise}]`
    : `[stopped: ran out of memory under the ${limit} memory limit (per process, RLIMIT_DATA, as no memory cgroup can be created here). ${raise}]`
}

function formatSize(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
  ] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))} ${unit}`
  }
  return `${bytes} bytes`
}
