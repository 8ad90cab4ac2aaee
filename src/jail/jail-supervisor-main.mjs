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
import fs from 'node:fs'
import path from 'node:path'
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

/**
 * The host's word that the jail is back to its idle processes: the next command's start may
 * begin ahead of it.
 * @typedef {object} Prepare
 * @property {true} prepare
 */

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
  // A waiter left unused (its command went the direct way) died too; its exit event may come
  // only after the next `prepare`, which must start a new one.
  waiter = undefined
}

/** Dash, the one shell whose start adds nothing to the environment it passes on but PWD. */
const DASH = ['/usr/bin/dash', '/bin/dash'].find((file) => fs.existsSync(file))

/**
 * Names the waiter can export as they are: a shell variable's name. Anything else (a name npm
 * or a shell function would use) goes the direct way, which passes any name.
 */
const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * Shell names whose assignment dash checks, where the direct spawn passes any value: `export
 * OPTIND=x` stops the script ("Illegal number"). They go the direct way.
 */
const DASH_CHECKED = new Set(['OPTIND'])

/** Longer requests go the direct way: an exec refused for its size fails as there. */
const WAITER_MAX_REQUEST = 64 * 1024

/**
 * The next command's process, started ahead: a dash reading its script on stdin (see
 * {@link takeWaiter}). Started only when the host said the jail is back to its idle processes
 * (its count of them proves it, not this supervisor's word), so the kill of a command's
 * stragglers never meets it, and killed with them if a command went the direct way.
 * @type {import('node:child_process').ChildProcessWithoutNullStreams | undefined}
 */
let waiter

/** Starts the next command's process ahead, when the jail is idle and has none. */
function prepareWaiter() {
  if (DASH === undefined || waiter !== undefined || current !== undefined || queue.length > 0)
    return
  // No environment at all: the script exports exactly the command's (dash adds PWD, which
  // the script unsets first).
  const child = spawn(DASH, ['-s'], { cwd: '/', env: {}, stdio: 'pipe', detached: true })
  const gone = () => {
    if (waiter === child) waiter = undefined
  }
  child.once('error', gone)
  child.once('exit', gone)
  child.stdin.on('error', () => undefined)
  waiter = child
}

/**
 * Whether this user may search or run `target` (X_OK) and it is of the kind wanted: an
 * executable file as exec would find it, or a folder the direct spawn's chdir may enter.
 * @param {string} target
 * @param {'file' | 'folder'} kind
 */
function usable(target, kind) {
  try {
    fs.accessSync(target, fs.constants.X_OK)
    const stat = fs.statSync(target)
    return kind === 'file' ? stat.isFile() : stat.isDirectory()
  } catch {
    return false
  }
}

/**
 * Whether exec would find `program` run from `cwd` with `environment`, as the direct spawn
 * would: a program it would not find goes the direct way, whose error the host knows.
 * @param {string} program
 * @param {string} cwd
 * @param {Readonly<Record<string, string | undefined>>} environment
 */
function findable(program, cwd, environment) {
  if (program.includes('/')) return startable(path.resolve(cwd, program))
  const search = environment['PATH']
  if (search === undefined) return false
  // A relative folder of PATH is searched from the command's folder, as exec there does; the
  // first executable file found is the one exec runs.
  const found = search
    .split(':')
    .map((folder) => (folder === '' ? undefined : path.resolve(cwd, folder, program)))
    .find((file) => file !== undefined && usable(file, 'file'))
  return found !== undefined && startable(found)
}

/**
 * Whether exec of `file` would start it: a machine program, or a script whose `#!`
 * interpreter is an executable file. Anything else (a missing interpreter, a file exec would
 * refuse as no program) goes the direct way, whose error is the one the host knows.
 * @param {string} file
 */
function startable(file) {
  if (!usable(file, 'file')) return false
  const head = Buffer.alloc(256)
  /** @type {number} */
  let length
  try {
    const descriptor = fs.openSync(file, 'r')
    try {
      length = fs.readSync(descriptor, head, 0, head.length, 0)
    } finally {
      fs.closeSync(descriptor)
    }
  } catch {
    return false
  }
  const start = head.subarray(0, length)
  if (start.subarray(0, 4).equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]))) return true
  if (start.subarray(0, 2).toString('latin1') !== '#!') return false
  const line = start.toString('latin1', 2).split('\n')[0] ?? ''
  const interpreter = line.trim().split(/[ \t]/)[0] ?? ''
  return interpreter.startsWith('/') && usable(interpreter, 'file')
}

/** A word as one single-quoted shell word: exact for any text without NUL. */
function quoted(/** @type {string} */ word) {
  return `'${word.replaceAll("'", "'\\''")}'`
}

/**
 * Gives a request to the waiting process: its script goes to the folder, sets exactly the
 * environment the direct spawn would, and execs the command with stdin from /dev/null, so
 * the process is the command (its PID, session and group are the waiter's, started detached).
 * Undefined when none waits or the request is not one it can take as the direct spawn would.
 * @param {Request} request
 */
function takeWaiter(request) {
  const child = waiter
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return undefined
  const environment = { ...process.env, ...request.environment }
  const names = Object.keys(environment)
  const [program, ...args] = request.argv
  if (
    program === undefined ||
    JSON.stringify(request).length > WAITER_MAX_REQUEST ||
    [...request.argv, request.cwd, ...names, ...Object.values(environment)].some((word) =>
      word?.includes('\0'),
    ) ||
    !names.every((name) => SHELL_NAME.test(name) && !DASH_CHECKED.has(name)) ||
    !usable(request.cwd, 'folder') ||
    !findable(program, request.cwd, environment)
  )
    return undefined
  waiter = undefined
  const exports = names.map((name) => `export ${quoted(`${name}=${environment[name]}`)}\n`)
  child.stdin.end(
    [
      `cd -P -- ${quoted(request.cwd)} || exit 127\n`,
      'unset PWD OLDPWD\n',
      ...exports,
      `exec ${[program, ...args].map(quoted).join(' ')} </dev/null\n`,
    ].join(''),
  )
  return child
}

/** Starts a command the usual way: Node forks itself and the child execs it. */
function spawnDirectly(/** @type {Request} */ request) {
  return spawn(request.argv[0] ?? '/bin/true', request.argv.slice(1), {
    cwd: request.cwd,
    env: { ...process.env, ...request.environment },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
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
  const child = takeWaiter(request) ?? spawnDirectly(request)
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
 * @returns {Request | Cancel | Prepare | undefined}
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
  const message = /** @type {Partial<Request> & Partial<Cancel> & Partial<Prepare>} */ (value)
  if (typeof message.cancel === 'number') return { cancel: message.cancel }
  if (message.prepare === true) return { prepare: true }
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

/**
 * The supervisor runs as the same user as its commands: only programs that user cannot read
 * make the kernel mark it and bubblewrap (PID 1) non-dumpable at exec, so that no command can
 * ptrace them or write their /proc/PID/mem (execute-only-copy.ts). A Node it can read, or a
 * PID 1 whose memory it can open, means the host started the wrong ones: it ends before it is
 * ready, and the host runs every command cold.
 */
function assertNotDumpable() {
  /** @type {[string, string][]} */
  const guarded = [
    [process.execPath, "the supervisor's Node"],
    ['/proc/1/mem', "bubblewrap's memory (PID 1)"],
  ]
  for (const [file, what] of guarded) {
    /** @type {number | undefined} */
    let descriptor
    try {
      descriptor = fs.openSync(file, 'r')
    } catch {
      continue
    }
    fs.closeSync(descriptor)
    process.stderr.write(
      `eitri: ${what} is readable by the jail's user, so its commands could trace it; refusing to start\n`,
    )
    process.exit(70)
  }
}

assertNotDumpable()
createInterface({ input: process.stdin }).on('line', (line) => {
  const message = parseLine(line)
  if (message === undefined) return
  if ('prepare' in message) return prepareWaiter()
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
