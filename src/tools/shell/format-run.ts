/**
 * @module tools/shell/format-run
 * How a finished command reads to a model: its output, its errors, its exit code.
 */
import type { ProgramRun } from '../../tool/program-session.ts'

/** stdout, then stderr under a heading, then the exit code and anything not written back. */
export function formatRun(run: ProgramRun): string {
  const parts: string[] = []
  if (run.stdout !== '') parts.push(run.stdout.replace(/\n$/, ''))
  if (run.stderr !== '') parts.push(`stderr:\n${run.stderr.replace(/\n$/, '')}`)
  if (parts.length === 0)
    parts.push(run.timedOut ? '(no output before the timeout)' : '(no output)')
  if (!run.timedOut) parts.push(`[exit ${run.exitCode ?? `by signal ${run.signal ?? 'unknown'}`}]`)
  // Where output was dropped, a marker in the output itself says how much (output-window.mts).
  for (const refused of run.refused ?? [])
    parts.push(`[not written back: ${refused.path}: ${refused.reason}]`)
  for (const kept of run.kept ?? []) parts.push(`[kept in the jail: ${kept.path}: ${kept.reason}]`)
  return parts.join('\n\n')
}
