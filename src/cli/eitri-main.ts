/**
 * @module cli/eitri-main
 * The process entry point of `eitri`: wires argv, stdio, signals and the exit status.
 */
import { main } from './main.ts'

const controller = new AbortController()
let interrupts = 0
for (const name of ['SIGINT', 'SIGTERM'] as const) {
  process.on(name, () => {
    if (++interrupts > 1) process.exit(130)
    controller.abort()
  })
}

const status = await main(
  process.argv.slice(2),
  {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    stdin: process.stdin,
  },
  controller.signal,
)
process.exitCode = status
// A finished command leaves nothing behind that should keep the process alive.
setTimeout(() => process.exit(status), 100).unref()
