/**
 * @module confine/executors/process-executor
 * The default executor: each call runs in a fresh Node child process (the parent's own Node),
 * in the call's scratch folder, in its own process group, with the minimal environment; at
 * the deadline the whole group, and whatever left it, is killed. It finds the files written in
 * the scratch folder itself. It bounds time, environment and working folder, not the file
 * system: a function may still write elsewhere on the host. Use the jail executor for that.
 */
import fs from 'node:fs/promises'
import { childReport } from '../child/child-report.ts'
import { newMarker } from '../child/confined-protocol.ts'
import type { Executor, ExecutorCall, ExecutorReport, ExecutorRunOptions } from './executor.ts'
import { changedFiles, snapshotFolder } from './folder-snapshot.ts'
import { minimalEnvironment } from '../child/minimal-environment.ts'
import { moduleTarget } from '../module-target.ts'
import { envelopeLimit } from '../result-text.ts'
import { spawnRunner } from '../child/spawn-runner.ts'
import { ownedPrefix } from '../../util/owned-folders.ts'

/** Options of {@link processExecutor}. */
export interface ProcessExecutorOptions {
  /** The Node that runs the child. @default process.execPath */
  readonly nodePath?: string
}

/**
 * The executor that runs each call in a child process.
 *
 * @example
 * const tool = confine(
 *   { module: import.meta.resolve('./word-count.ts'), export: 'wordCount' },
 *   { name: 'word_count', description: 'Counts words.', parameters, executor: processExecutor() },
 * )
 */
export function processExecutor(options: ProcessExecutorOptions = {}): Executor {
  const nodePath = options.nodePath ?? process.execPath
  return Object.freeze({
    name: 'process',
    outOfProcess: true,
    allowsInheritedEnvironment: true,
    run: (call: ExecutorCall, runOptions: ExecutorRunOptions = {}) =>
      runInChild(nodePath, call, runOptions.signal),
  })
}

async function runInChild(
  nodePath: string,
  call: ExecutorCall,
  signal: AbortSignal | undefined,
): Promise<ExecutorReport> {
  const target = moduleTarget(call.target, 'process')
  const before = await snapshotFolder(call.workdir)
  // Temporary files go to a private folder beside the scratch folder, not among its outputs.
  const temporaryFolder = await fs.mkdtemp(ownedPrefix('confine-tmp'))
  try {
    const marker = newMarker()
    const end = await spawnRunner({
      nodePath,
      request: {
        module: target.module,
        export: target.export,
        input: call.input,
        workdir: call.workdir,
        marker,
        maxOutputBytes: call.maxOutputBytes,
      },
      environment: call.inheritedEnvironment ?? minimalEnvironment(call.workdir, temporaryFolder),
      cwd: call.workdir,
      timeoutMs: call.timeoutMs,
      maxEnvelopeBytes: envelopeLimit(call.maxOutputBytes),
      signal,
    })
    return childReport(end, changedFiles(before, await snapshotFolder(call.workdir)))
  } finally {
    await fs.rm(temporaryFolder, { recursive: true, force: true })
  }
}
