/**
 * @module confine/executors/inline-executor
 * The fake executor, for tests: runs the function in this process, with no confinement at all.
 * It finds writes in the scratch folder like the others, and also takes the function's word
 * for writes elsewhere (`call.reportWrite`). At the deadline it aborts `call.signal` and
 * reports the timeout, but cannot stop a function that ignores it. The environment option does
 * not apply: the function sees this process's. Used only when chosen explicitly.
 */
import path from 'node:path'
import { callExport, loadExport } from '../child/call-target.ts'
import type { ConfinedCall } from '../confined-function.ts'
import type { Executor, ExecutorCall, ExecutorReport, ExecutorRunOptions } from './executor.ts'
import { changedFiles, snapshotFolder } from './folder-snapshot.ts'
import { hashFile } from '../hash-files.ts'

/**
 * The in-process executor.
 *
 * @example
 * const tool = confine(async ({ text }: { text: string }) => text.length, {
 *   name: 'length', description: 'Counts characters.', parameters, executor: inlineExecutor(),
 * })
 */
export function inlineExecutor(): Executor {
  return Object.freeze({
    name: 'inline',
    outOfProcess: false,
    allowsInheritedEnvironment: true,
    run: runInline,
  })
}

type Outcome = { result: unknown } | { error: string } | { stopped: 'timeout' | 'cancelled' }

async function runInline(
  call: ExecutorCall,
  options: ExecutorRunOptions = {},
): Promise<ExecutorReport> {
  const before = await snapshotFolder(call.workdir)
  const reported: string[] = []
  const deadline = new AbortController()
  const signal =
    options.signal === undefined
      ? deadline.signal
      : AbortSignal.any([options.signal, deadline.signal])
  const confinedCall: ConfinedCall = {
    workdir: call.workdir,
    signal,
    reportWrite: (written) => reported.push(written),
  }
  const outcome = await raceDeadline(call, options.signal, async () => {
    const target = call.target
    const exported =
      target.type === 'function' ? target.function : await loadExport(target.module, target.export)
    return callExport(exported, call.input, confinedCall)
  })
  if ('stopped' in outcome) deadline.abort()
  const files: Record<string, string> = changedFiles(before, await snapshotFolder(call.workdir))
  for (const written of reported) {
    files[written] = (await hashFile(path.resolve(call.workdir, written))) ?? ''
  }
  const base = { stdout: '', files }
  if ('result' in outcome) return { ...base, result: outcome.result, status: 'ok' }
  if ('error' in outcome)
    return { ...base, result: undefined, status: 'error', error: outcome.error }
  return outcome.stopped === 'timeout'
    ? { ...base, result: undefined, status: 'timeout', error: `stopped after ${call.timeoutMs} ms` }
    : { ...base, result: undefined, status: 'error', error: 'cancelled' }
}

async function raceDeadline(
  call: ExecutorCall,
  signal: AbortSignal | undefined,
  work: () => Promise<unknown>,
): Promise<Outcome> {
  let timer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  const stopped = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ stopped: 'timeout' }), call.timeoutMs)
    onAbort = () => resolve({ stopped: 'cancelled' })
    signal?.addEventListener('abort', onAbort, { once: true })
    if (signal?.aborted === true) onAbort()
  })
  const running = work().then(
    (result): Outcome => ({ result }),
    (error: unknown): Outcome => ({
      error: error instanceof Error ? error.message : String(error),
    }),
  )
  try {
    return await Promise.race([running, stopped])
  } finally {
    clearTimeout(timer)
    if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort)
  }
}
