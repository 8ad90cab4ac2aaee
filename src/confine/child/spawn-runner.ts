/**
 * @module confine/spawn-runner
 * Runs the child runner as a fresh Node process on the host: in the scratch folder, in its own
 * process group, with only the environment given. At the deadline, on cancellation, on an
 * oversized result, and also when it ends on its own, every process of the call is killed.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { CALL_MARKER_VARIABLE, killCallProcesses } from './call-processes.ts'
import type { ChildEnd } from './child-report.ts'
import type { ConfinedRequest } from './confined-protocol.ts'
import { EnvelopeReader } from './envelope-reader.ts'
import { RUNNER_PATH } from './runner-path.ts'

/** How long the streams may stay open after every process was killed (a descendant that escaped
 * the sweep and holds them is not waited for). */
const CLOSE_GRACE_MS = 2000
/** Characters of stderr kept (the last ones), for the message when the child dies. */
const STDERR_KEPT_CHARS = 8000

/** What {@link spawnRunner} needs. */
export interface SpawnRunnerOptions {
  readonly nodePath: string
  readonly request: ConfinedRequest
  readonly environment: Readonly<Record<string, string>>
  readonly cwd: string
  readonly timeoutMs: number
  readonly maxEnvelopeBytes: number
  readonly signal?: AbortSignal | undefined
}

/** Runs one call in a child process and answers how it ended. */
export async function spawnRunner(options: SpawnRunnerOptions): Promise<ChildEnd> {
  const { request, timeoutMs, maxEnvelopeBytes, signal } = options
  const token = randomUUID()
  const reader = new EnvelopeReader(request.marker, {
    maxOutputBytes: request.maxOutputBytes,
    maxEnvelopeBytes,
  })
  let stderr = ''
  let stoppedFor: ChildEnd['stoppedFor']
  const child = spawn(options.nodePath, [RUNNER_PATH], {
    cwd: options.cwd,
    // The marker lets the sweep find descendants that left the process group.
    env: { ...options.environment, [CALL_MARKER_VARIABLE]: token },
    // Its own process group (a new session), so one kill reaches all it started there.
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const killAll = (): void => {
    if (child.pid !== undefined) killCallProcesses(child.pid, token)
  }
  const stop = (reason: NonNullable<ChildEnd['stoppedFor']>): void => {
    stoppedFor ??= reason
    killAll()
  }
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()))
  child.stdout.on('data', (chunk: Buffer) => {
    reader.push(chunk)
    if (reader.envelopeTooLarge) stop('output')
  })
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT_CHARS)
  })
  child.stdin.on('error', () => undefined)
  child.stdin.end(JSON.stringify(request))
  const timer = setTimeout(() => stop('timeout'), timeoutMs)
  const onAbort = (): void => stop('cancellation')
  signal?.addEventListener('abort', onAbort, { once: true })
  if (signal?.aborted === true) onAbort()
  try {
    const exit = await new Promise<{ code: number | null; signal: string | null; error?: string }>(
      (resolve) => {
        child.once('error', (error) => resolve({ code: null, signal: null, error: error.message }))
        child.once('exit', (code, exitSignal) => resolve({ code, signal: exitSignal }))
      },
    )
    clearTimeout(timer)
    if (exit.error === undefined) {
      // Nothing the call started outlives it, even when it ended on its own.
      killAll()
      await graceful(closed, () => {
        child.stdout.destroy()
        child.stderr.destroy()
      })
    }
    return {
      output: reader.finish(),
      stderr,
      exitCode: exit.code,
      signal: exit.signal,
      stoppedFor,
      spawnError: exit.error,
      timeoutMs,
      maxEnvelopeBytes,
    }
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener('abort', onAbort)
  }
}

async function graceful(closed: Promise<void>, giveUp: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      giveUp()
      resolve()
    }, CLOSE_GRACE_MS)
  })
  await Promise.race([closed, late])
  clearTimeout(timer)
}
