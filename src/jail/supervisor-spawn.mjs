// @ts-check
/**
 * @module jail/supervisor-spawn
 * How the warm jail's supervisor starts a command: through the Perl forker that started it
 * (jail-forker.ts, decision 0024) when it was given `--forker`, else with Node's spawn. Either
 * way the caller gets what it used of a ChildProcess: `pid`, `stdout` and `stderr` streams, and
 * the events `spawn` (its pid is known), `error`, `exit` (code, signal) and `close` (code,
 * signal: after the exit and the end of both streams, i.e. once nothing holds the command's
 * pipes any more).
 * Mounted beside the supervisor; it imports nothing but Node's own modules.
 */
import { spawn } from 'node:child_process'
import { EventEmitter } from 'node:events'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import { createInterface } from 'node:readline'
import { PassThrough } from 'node:stream'

/** The supervisor's end of the forker's socket pair (jail-forker.ts). */
const FORKER_FD = 3

/**
 * What the supervisor uses of a started command.
 * @typedef {EventEmitter & { pid: number | undefined, stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream }} Started
 */

/**
 * Answers the function that starts one command at a time.
 * @param {boolean} forker true when the forker started this supervisor (`--forker`)
 * @param {NodeJS.ProcessEnv} jailEnvironment the supervisor's own, below each command's (the
 *   forker's children inherit the same)
 * @returns {(argv: readonly string[], cwd: string, environment: Readonly<Record<string, string>>) => Started}
 */
export function commandStarter(forker, jailEnvironment) {
  if (!forker)
    return (argv, cwd, environment) => nodeSpawn(argv, cwd, { ...jailEnvironment, ...environment })
  /** @type {ForkedCommand | undefined} */
  let current
  const channel = new net.Socket({ fd: FORKER_FD, readable: true, writable: true })
  createInterface({ input: channel }).on('line', (line) => current?.report(line, channel))
  // Without its forker the supervisor cannot run anything: the jail ends, and the host says why.
  channel.once('close', () => process.exit(125))
  return (argv, cwd, environment) => {
    current = new ForkedCommand()
    const entries = Object.entries(environment).map(([name, value]) => `${name}=${value}`)
    const words = [cwd, String(entries.length), ...entries, ...argv]
    if (argv.length === 0 || words.some((word) => word.includes('\0'))) {
      const refused = current
      process.nextTick(() => refused.fail('a word of the command holds a NUL character'))
      return refused
    }
    const body = Buffer.from(words.map((word) => `${word}\0`).join(''))
    channel.write(Buffer.concat([Buffer.from(String(body.length).padStart(10, '0')), body]))
    return current
  }
}

/**
 * @param {readonly string[]} argv
 * @param {string} cwd
 * @param {NodeJS.ProcessEnv} env
 * @returns {Started}
 */
function nodeSpawn(argv, cwd, env) {
  const child = spawn(argv[0] ?? '/bin/true', argv.slice(1), {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  return /** @type {Started} */ (/** @type {unknown} */ (child))
}

/** A command the forker started, seen as a ChildProcess; fed the forker's report lines. */
class ForkedCommand extends EventEmitter {
  /** @type {number | undefined} */
  pid
  stdout = new PassThrough()
  stderr = new PassThrough()
  /** @type {[number | null, string | null] | undefined} */
  #exit
  #open = 2

  /**
   * @param {string} line
   * @param {net.Socket} channel the forker's, for the answer to `started`
   */
  report(line, channel) {
    const [word, ...rest] = line.split(' ')
    if (word === 'failed') return this.fail(rest.join(' '))
    if (word === 'started') return this.#started(rest.map(Number), channel)
    // Only this command's end: the forker names its pid.
    if (word !== 'exit' || this.#exit !== undefined || Number(rest[0]) !== this.pid) return
    const status = Number(rest[1])
    const signalNumber = status & 127
    const signal =
      signalNumber === 0
        ? null
        : (Object.entries(os.constants.signals).find(
            ([, number]) => number === signalNumber,
          )?.[0] ?? `SIG${signalNumber}`)
    this.#exit = [signal === null ? status >> 8 : null, signal]
    this.emit('exit', ...this.#exit)
    this.#closed()
  }

  /** @param {string} why */
  fail(why) {
    this.emit('error', new Error(why))
  }

  /**
   * @param {number[]} numbers the pid and the forker's fds of the two read ends
   * @param {net.Socket} channel
   */
  #started([pid, out, err], channel) {
    this.pid = pid
    try {
      this.#read(out, this.stdout)
      this.#read(err, this.stderr)
    } catch (error) {
      // Not expected (the supervisor runs as the forker's user); the caller kills the command.
      this.fail(`could not read the command's output: ${String(error)}`)
    } finally {
      // The forker waits for this byte before it closes its ends of the pipes.
      channel.write('A')
    }
    this.emit('spawn')
  }

  /**
   * Reads a read end of the forker's into `into`, opened through /proc (the same pipe, a
   * reader of our own).
   * @param {number | undefined} fd
   * @param {PassThrough} into
   */
  #read(fd, into) {
    const own = fs.openSync(
      `/proc/${process.ppid}/fd/${fd}`,
      fs.constants.O_RDONLY | fs.constants.O_NONBLOCK,
    )
    const stream = new net.Socket({ fd: own, readable: true, writable: false })
    stream.on('data', (/** @type {Buffer} */ chunk) => into.write(chunk))
    stream.on('error', () => undefined)
    stream.once('close', () => {
      this.#open--
      this.#closed()
    })
  }

  #closed() {
    if (this.#open === 0 && this.#exit !== undefined) this.emit('close', ...this.#exit)
  }
}
