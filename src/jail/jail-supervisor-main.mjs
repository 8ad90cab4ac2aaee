// @ts-check
/**
 * @module jail/jail-supervisor-main
 * Runs INSIDE a warm jail: reads one command at a time as a JSON line on stdin, runs it with
 * only stdin, stdout and stderr, bounds its output, and answers one JSON line on stdout. After
 * every command (finished, timed out or cancelled) it kills every other process in the jail's
 * PID namespace, so nothing a command started outlives it, as with a fresh jail per command.
 * It imports nothing but Node's own modules and util/output-window.mjs: only Node and these two
 * files are mounted for it (at the same places relative to each other as in the sources). Plain JavaScript, typed through JSDoc and checked by TypeScript:
 * Node starts it without stripping types, which would cost every warm jail started from the
 * sources about 200 ms more here.
 */
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { OutputWindow } from '../util/output-window.mjs'

/**
 * One command of the host.
 * @typedef {object} Request
 * @property {number} id
 * @property {readonly string[]} argv
 * @property {string} cwd
 * @property {Readonly<Record<string, string>>} environment
 * @property {number} timeoutMs
 * @property {number} maxOutputChars
 */

/**
 * The host's cancel of a command.
 * @typedef {object} Cancel
 * @property {number} cancel
 */

/**
 * How long a command that reached its deadline gets between the interrupt and the kill: test
 * runners and builds answer an interrupt (Ctrl-C) by printing their summary and what they had
 * buffered, which a kill would lose. The host's grace past the deadline (warm-jail.ts) is longer.
 */
const INTERRUPT_GRACE_MS = 1000

/** @type {Request[]} */
const queue = []
/** @type {{ id: number, stop: (reason: 'timeout' | 'cancelled') => void } | undefined} */
let current

/** @param {object} message */
function reply(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`)
}

/** Kills every process this one may signal in the namespace: all but PID 1 and itself. */
function killStragglers() {
  try {
    process.kill(-1, 'SIGKILL')
  } catch {
    // nothing left to kill
  }
}

function runNext() {
  if (current !== undefined) return
  const request = queue.shift()
  if (request === undefined) return
  const started = performance.now()
  const stdout = new OutputWindow(request.maxOutputChars)
  const stderr = new OutputWindow(request.maxOutputChars)
  /** @type {'timeout' | 'cancelled' | undefined} */
  let ended
  const child = spawn(request.argv[0] ?? '/bin/true', request.argv.slice(1), {
    cwd: request.cwd,
    env: { ...process.env, ...request.environment },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  /** @type {NodeJS.Timeout | undefined} */
  let grace
  /** @param {'timeout' | 'cancelled'} reason */
  const stop = (reason) => {
    ended ??= reason
    if (reason === 'cancelled' || child.pid === undefined) return killStragglers()
    try {
      process.kill(-child.pid, 'SIGINT')
    } catch {
      // the command's group is gone already
    }
    grace ??= setTimeout(killStragglers, INTERRUPT_GRACE_MS)
  }
  const timer = setTimeout(() => stop('timeout'), request.timeoutMs)
  current = { id: request.id, stop }
  child.stdout.on('data', (/** @type {Buffer} */ chunk) => stdout.push(chunk))
  child.stderr.on('data', (/** @type {Buffer} */ chunk) => stderr.push(chunk))
  /**
   * @param {number | null} exitCode
   * @param {string | null} signal
   * @param {string} [spawnError]
   */
  const finish = (exitCode, signal, spawnError) => {
    clearTimeout(timer)
    clearTimeout(grace)
    killStragglers()
    current = undefined
    const stdoutText = stdout.text()
    const stderrText = stderr.text()
    reply({
      id: request.id,
      exitCode: ended === undefined ? exitCode : null,
      signal,
      timedOut: ended === 'timeout',
      cancelled: ended === 'cancelled',
      durationMs: performance.now() - started,
      stdout: stdoutText,
      stderr: spawnError === undefined ? stderrText : `${stderrText}${spawnError}\n`,
      stdoutDropped: stdout.droppedChars,
      stderrDropped: stderr.droppedChars,
    })
    runNext()
  }
  child.once('error', (error) => finish(127, null, error.message))
  // When the command exits, whatever it left running (and holding its pipes) dies with it.
  child.once('exit', () => killStragglers())
  child.once('close', (code, signal) => finish(code, signal))
}

/**
 * A line of the host, or undefined for anything else (a command can reach this pipe too).
 * @param {string} line
 * @returns {Request | Cancel | undefined}
 */
function parseLine(line) {
  /** @type {unknown} */
  let value
  try {
    value = JSON.parse(line)
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const message = /** @type {Partial<Request> & Partial<Cancel>} */ (value)
  if (typeof message.cancel === 'number') return { cancel: message.cancel }
  const fine =
    typeof message.id === 'number' &&
    Array.isArray(message.argv) &&
    message.argv.every((part) => typeof part === 'string') &&
    typeof message.cwd === 'string' &&
    typeof message.environment === 'object' &&
    message.environment !== null &&
    typeof message.timeoutMs === 'number' &&
    typeof message.maxOutputChars === 'number'
  return fine ? /** @type {Request} */ (message) : undefined
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const message = parseLine(line)
  if (message === undefined) return
  if ('cancel' in message) {
    if (current?.id === message.cancel) current.stop('cancelled')
    const index = queue.findIndex((request) => request.id === message.cancel)
    if (index >= 0) {
      queue.splice(index, 1)
      reply({
        id: message.cancel,
        exitCode: null,
        signal: null,
        timedOut: false,
        cancelled: true,
        durationMs: 0,
        stdout: '',
        stderr: '',
        stdoutDropped: 0,
        stderrDropped: 0,
      })
    }
    return
  }
  queue.push(message)
  runNext()
})
reply({ ready: true })
