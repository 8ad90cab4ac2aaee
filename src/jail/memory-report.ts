/**
 * @module jail/memory-report
 * Whether the jail's memory bound stopped a program, so the answer can name the limit instead
 * of leaving a model to guess at a bare "Killed" or exit 137.
 */
import type { ProgramMemory } from '../ports/program-session.ts'

/**
 * What programs print when an allocation fails (C, C++, Rust, Go, Python, Java, Node, V8,
 * WebAssembly). Only read under RLIMIT_DATA, where a failed allocation is how the bound shows.
 */
const OUT_OF_MEMORY =
  /Cannot allocate memory|out of memory|\bENOMEM\b|std::bad_alloc|\bMemoryError\b|OutOfMemoryError|could not allocate memory|allocation failed|Could not reserve enough space|memory allocation of \d+ bytes failed|memory exhausted|failed to allocate|ERR_MEMORY_ALLOCATION_FAILED/i

/** How much of each stream's end is searched for an out-of-memory message. */
const SEARCHED_CHARS = 4000

/** The memory report of one finished program. */
export function memoryReport(run: {
  readonly limitBytes: number
  readonly inCgroup: boolean
  /** Processes the cgroup's kernel OOM killer ended while the program ran. */
  readonly oomKills: number
  readonly exitCode: number | null
  readonly stdout: string
  readonly stderr: string
}): ProgramMemory {
  const boundBy = run.inCgroup ? 'cgroup' : 'rlimit-data'
  const report = { limitBytes: run.limitBytes, boundBy } as const
  if (run.inCgroup) return run.oomKills > 0 ? { ...report, exceeded: 'oom-kill' } : report
  const failed = run.exitCode !== 0
  const said = `${run.stdout.slice(-SEARCHED_CHARS)}\n${run.stderr.slice(-SEARCHED_CHARS)}`
  return failed && OUT_OF_MEMORY.test(said) ? { ...report, exceeded: 'out-of-memory' } : report
}
