/**
 * @module jail/unconfined-run
 * A program run OUTSIDE the jail: only for a call a person approved at full access, and
 * recorded as such by the access layer. Still bounded in time and output, and killed with
 * its whole process group at the deadline.
 */
import { spawn } from 'node:child_process'
import { BoundedOutput, DEFAULT_MAX_OUTPUT_CHARS } from './bounded-output.ts'
import type { JailResult } from './jail.ts'

/** What an unconfined run needs. */
export interface UnconfinedRequest {
  readonly command: readonly string[]
  /** The host folder to run in (the workspace). */
  readonly cwd: string
  readonly environment: Readonly<Record<string, string | undefined>>
  readonly timeoutMs: number
  readonly maxOutputChars?: number | undefined
  readonly signal?: AbortSignal | undefined
}

/** Runs the program on the host; resolves when it and its output have ended. */
export function runUnconfined(request: UnconfinedRequest): Promise<JailResult> {
  const started = performance.now()
  const stdout = new BoundedOutput(request.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS)
  const stderr = new BoundedOutput(request.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS)
  let timedOut = false
  let cancelled = false
  return new Promise((resolve) => {
    const child = spawn(request.command[0] ?? '/bin/true', request.command.slice(1), {
      cwd: request.cwd,
      env: request.environment,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    const kill = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
    const timer = setTimeout(() => {
      timedOut = true
      kill()
    }, request.timeoutMs)
    const onAbort = (): void => {
      cancelled = true
      kill()
    }
    request.signal?.addEventListener('abort', onAbort, { once: true })
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk))
    const finish = (exitCode: number | null, signal: string | null, spawnError?: string): void => {
      clearTimeout(timer)
      request.signal?.removeEventListener('abort', onAbort)
      resolve({
        exitCode,
        signal,
        timedOut,
        cancelled,
        durationMs: performance.now() - started,
        stdout: stdout.text(),
        stderr: spawnError === undefined ? stderr.text() : `${stderr.text()}${spawnError}\n`,
        truncated: stdout.droppedChars + stderr.droppedChars > 0,
        ...(spawnError === undefined ? {} : { spawnError }),
      })
    }
    child.once('error', (error) => finish(127, null, error.message))
    child.once('close', (code, signal) => finish(code, signal))
  })
}
