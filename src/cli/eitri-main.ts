/**
 * @module cli/eitri-main
 * The process entry point of `eitri`: wires argv, stdio, signals and the exit status.
 */
import { main } from './main.ts'

const controller = new AbortController()
/**
 * A second interrupt ends eitri at once. One Ctrl-C can arrive twice, though: from the terminal
 * and from bin/eitri.js passing it on when it relaunched eitri under Node 24. Interrupts within
 * this many milliseconds of the first count as that one, so cleanup still runs.
 */
const SAME_INTERRUPT_MS = 250
let firstInterrupt: number | undefined
for (const name of ['SIGINT', 'SIGTERM'] as const) {
  process.on(name, () => {
    const now = Date.now()
    if (firstInterrupt !== undefined && now - firstInterrupt > SAME_INTERRUPT_MS) process.exit(130)
    firstInterrupt ??= now
    controller.abort()
  })
}

/**
 * A reader that goes away (`eitri log | head`, a client that closed its end) ends eitri as
 * SIGPIPE ends other programs: quietly, through the same cleanup as Ctrl-C, with no stack trace;
 * what is still written to that stream is dropped. Other write errors stay errors. stdout's
 * reader going away reaches the command as `stdoutClosed` (main.ts cancels the commands that
 * do not handle it: `eitri exec` ends its program as a pipeline would instead).
 */
const gone = { stdout: false, stderr: false }
const stdoutClosed = new AbortController()
for (const name of ['stdout', 'stderr'] as const) {
  process[name].on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
    gone[name] = true
    if (name === 'stdout') stdoutClosed.abort()
    else controller.abort()
  })
}

const status = await main(
  process.argv.slice(2),
  {
    stdout: (text) => void (gone.stdout || process.stdout.write(text)),
    stderr: (text) => void (gone.stderr || process.stderr.write(text)),
    stdin: process.stdin,
    stdoutClosed: stdoutClosed.signal,
  },
  controller.signal,
)
process.exitCode = status
// A finished command leaves nothing behind that should keep the process alive.
setTimeout(() => process.exit(status), 100).unref()
