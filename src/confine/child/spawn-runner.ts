/**
 * @module confine/spawn-runner
 * Runs the child runner as a fresh Node process on the host: in the scratch folder, in its own
 * process group, with only the environment given. At the deadline, on cancellation, on an
 * oversized result, and also when it ends on its own, every process of the call is killed.
 */
import { randomUUID } from 'node:crypto'
import { startBounded } from '../../util/bounded-spawn.ts'
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
  const exit = await startBounded(options.nodePath, [RUNNER_PATH], {
    cwd: options.cwd,
    // The marker lets the sweep find descendants that left the process group.
    env: { ...options.environment, [CALL_MARKER_VARIABLE]: token },
    stdin: JSON.stringify(request),
    // An oversized result stops the call (`output`).
    stdout: {
      push: (chunk) => reader.push(chunk),
      get overflowed() {
        return reader.envelopeTooLarge
      },
    },
    stderr: {
      push: (chunk) => {
        stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT_CHARS)
      },
    },
    // The group, and every process carrying the call's marker that left it.
    kill: (pid) => void killCallProcesses(pid, token),
    // Nothing the call started outlives it, even when it ended on its own.
    killOnExit: true,
    closeGraceMs: CLOSE_GRACE_MS,
    timeoutMs,
    signal,
  }).exited
  return {
    output: reader.finish(),
    stderr,
    exitCode: exit.exitCode,
    signal: exit.signal,
    stoppedFor: exit.stoppedBy,
    spawnError: exit.spawnError,
    timeoutMs,
    maxEnvelopeBytes,
  }
}
