/**
 * @module test/helpers/run-quietly
 * For tests that use real bash as the oracle of what the policy should read.
 */
import { spawn } from 'node:child_process'

/**
 * Runs a program to its end with no input or output. Its standard input must not be a socket
 * (as Node's pipes are): bash then takes itself for a remote shell and skips `BASH_ENV`, and
 * `cat` would wait for input.
 */
export async function runQuietly(
  program: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<void> {
  const child = spawn(program, args, { ...options, stdio: 'ignore', timeout: 10_000 })
  await new Promise((resolve) => child.once('close', resolve))
}
