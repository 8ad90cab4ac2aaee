/**
 * Runs the real `eitri` entry point (bin/eitri.js) as a child process under this Node.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** The entry point users run. */
export const EITRI_BIN = fileURLToPath(new URL('../../bin/eitri.js', import.meta.url))

export interface Finished {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `eitri ARGS` to completion. */
export function runEitri(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<Finished> {
  const child = spawn(process.execPath, [EITRI_BIN, ...args], {
    env: options.env ?? process.env,
    stdio: 'pipe',
  })
  child.stdin.end(options.input ?? '')
  return finished(child)
}

/** What a child process printed and how it ended, once it has. */
export function finished(child: ChildProcess): Promise<Finished> {
  return new Promise((resolve, reject) => {
    let stdout = ''
    let stderr = ''
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.once('error', reject)
    child.once('close', (status) => resolve({ status, stdout, stderr }))
  })
}

/** A started process that said it is ready. */
export interface Started {
  readonly child: ChildProcess
  readonly match: RegExpExecArray
  readonly stderr: () => string
}

/** Starts `eitri ARGS` and waits until stderr prints a line matching `ready`. */
export function startEitri(args: readonly string[], ready: RegExp): Promise<Started> {
  return startNode([EITRI_BIN, ...args], ready)
}

/** Starts this Node on `args` and waits until stderr matches `ready`. */
export function startNode(args: readonly string[], ready: RegExp): Promise<Started> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args], { stdio: 'pipe' })
    let stderr = ''
    const timer = setTimeout(() => reject(new Error(`eitri did not get ready: ${stderr}`)), 20_000)
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
      const match = ready.exec(stderr)
      if (match !== null) {
        clearTimeout(timer)
        resolve({ child, match, stderr: () => stderr })
      }
    })
    child.once('exit', (status) => {
      clearTimeout(timer)
      reject(new Error(`eitri exited with ${status} before it was ready: ${stderr}`))
    })
  })
}

/** Ends a child and waits for it. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}
