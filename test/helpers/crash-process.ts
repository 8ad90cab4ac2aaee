/**
 * Runs a fixture that changes main and kills itself at a named step (or is killed by the test
 * after a delay), for the crash tests of the merge journal.
 */
import { spawn } from 'node:child_process'

/**
 * Runs `node FIXTURE ...args`; the fixture prints a line when it begins the work measured.
 * With `killAfterMs`, the test kills it that long after. Answers how long it ran after it
 * began, in ms.
 */
export function crashProcess(
  fixture: string,
  args: readonly string[],
  killAfterMs?: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fixture, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    let began = 0
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdout.once('data', () => {
      began = performance.now()
      if (killAfterMs !== undefined) setTimeout(() => child.kill('SIGKILL'), killAfterMs)
    })
    child.once('error', reject)
    child.once('exit', (code, signal) => {
      if (code === 0 || signal === 'SIGKILL') resolve(performance.now() - began)
      else reject(new Error(`the crashing process failed (${code ?? signal}): ${stderr}`))
    })
  })
}
