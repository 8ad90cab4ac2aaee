/**
 * @module eval/host/sandbox-process
 * The process that hosts the isolates, seen from the server: started with the server's own
 * Node, `--no-node-snapshot` (isolated-vm needs it) and an empty environment (no secret of the
 * server's is ever in it), inside bubblewrap (`sandbox-confinement.ts`), spoken to in JSON lines on two lanes each way (small messages on
 * the sandbox's stdin and fd 3, large ones on fds 5 and 4: `SANDBOX_PIPES`). Every line from it
 * is bounded in length and validated before use, since the guest code it runs is the least
 * trusted thing on the machine; a line out of protocol ends it.
 */
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import type { Readable, Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { EitriError } from '../../errors/eitri-error.ts'
import { BoundedChild, type OutputSink } from '../../util/bounded-spawn.ts'
import { LineSplitter } from '../../util/line-splitter.ts'
import { MAX_ARGUMENT_CHARS } from '../eval-limits.ts'
import { LineWriter, SMALL_LINE_CHARS, type WriterTraffic } from '../line-writer.ts'
import {
  confinementFailure,
  sandboxLaunch,
  type SandboxConfinement,
  type SandboxLaunch,
} from './sandbox-confinement.ts'
import {
  SANDBOX_PIPES,
  sandboxMessageSchema,
  type HostMessage,
  type SandboxMessage,
} from '../sandbox-protocol.ts'

const here = fileURLToPath(import.meta.url)

/** The sandbox's entry point, with this file's own extension (`.ts` from a clone, `.js` built). */
export const SANDBOX_MAIN = path.join(
  path.dirname(here),
  '..',
  'sandbox',
  `sandbox-main${path.extname(here)}`,
)

/** How long the sandbox may take to say it is ready. */
const START_TIMEOUT_MS = 15_000
/** Characters of the sandbox's stderr kept, for the message when it dies. */
const STDERR_KEPT_CHARS = 4_000
/**
 * Longest line the sandbox may send: a call's arguments (JSON, at most MAX_ARGUMENT_CHARS
 * characters) written again inside the message's JSON take at most three bytes a character,
 * plus room for the rest of the message.
 */
export const MAX_SANDBOX_LINE_BYTES = 3 * MAX_ARGUMENT_CHARS + 1024 * 1024
/** Longest line of the small lane: its writer sends no line over SMALL_LINE_CHARS characters. */
const MAX_SMALL_LINE_BYTES = 3 * SMALL_LINE_CHARS + 1024

/** What crossed the pipes between the server and one sandbox. */
export interface SandboxTraffic {
  /** The server's writer: characters per lane and large messages waiting. */
  readonly toSandbox: WriterTraffic
  readonly fromSandbox: { readonly smallBytes: number; readonly largeBytes: number }
}

/** What the owner of a sandbox process hears. */
export interface SandboxProcessEvents {
  readonly message: (message: SandboxMessage) => void
  /** The process ended without being closed. */
  readonly exit: (reason: string) => void
}

/** The Node flags of the sandbox process: isolated-vm needs `--no-node-snapshot`. */
const SANDBOX_NODE_ARGS = ['--no-node-snapshot', '--disable-warning=ExperimentalWarning']

/** How the sandbox process is started. */
export interface SandboxStartOptions {
  /** The Node that runs it. @default the server's own */
  readonly nodePath?: string | undefined
  /** @default 'bubblewrap' */
  readonly confinement?: SandboxConfinement | undefined
  /** The bubblewrap program. @default 'bwrap' */
  readonly bwrap?: string | undefined
}

/**
 * Spawns what `launch` says with the sandbox's descriptors: stdin and fd 5 from the server,
 * fds 3 and 4 to it, stderr to `stderr`, stdout unused; in a process group of its own, killed
 * whole. Shared with the confinement tests, which run a probe instead of the sandbox in the
 * very same way. A long-lived peer spoken to over its pipes, so no deadline or output window
 * of the bounded spawn applies: only its group kill.
 */
export function spawnSandbox(launch: SandboxLaunch, stderr?: OutputSink): BoundedChild {
  return new BoundedChild(launch.command, launch.args, {
    stdout: 'ignore',
    extraPipes: 3,
    keepStdinOpen: true,
    stderr: stderr ?? { push: () => undefined },
    env: launch.env,
    cwd: '/',
    uid: launch.uid,
    gid: launch.gid,
  })
}

/** One running sandbox process. */
export class SandboxProcess {
  readonly #process: BoundedChild
  readonly #child: ChildProcess
  readonly #toSandbox: LineWriter
  #stderr = ''
  /** When the sandbox last sent anything (a whole line or a part of one). */
  #lastHeardAt = performance.now()
  #closed = false
  #exited = false
  /** Set when the sandbox runs under bubblewrap: its own process, below bubblewrap's. */
  #hostPid: number | undefined
  readonly #exit: Promise<void>
  /** Bytes received from the sandbox on each lane. */
  readonly #received = { small: 0, large: 0 }

  private constructor(started: BoundedChild) {
    this.#process = started
    const child = started.child
    this.#child = child
    this.#exit = new Promise((resolve) => child.once('exit', () => resolve()))
    // Both are pipes (spawn below), so they exist.
    this.#toSandbox = new LineWriter({
      small: child.stdin as Writable,
      large: pipeOf(child, SANDBOX_PIPES.largeToSandbox) as Writable,
    })
  }

  /**
   * Starts a sandbox process and waits until it is ready.
   *
   * @throws EitriError `jail_unavailable` when bubblewrap cannot start it (nothing runs
   *   unconfined instead); `sandbox_reset` when the sandbox itself cannot start.
   */
  static async start(
    events: SandboxProcessEvents,
    options: SandboxStartOptions = {},
  ): Promise<SandboxProcess> {
    const launch = sandboxLaunch({
      nodePath: options.nodePath ?? process.execPath,
      nodeArgs: SANDBOX_NODE_ARGS,
      script: SANDBOX_MAIN,
      confinement: options.confinement ?? 'bubblewrap',
      bwrap: options.bwrap,
    })
    const started = spawnSandbox(launch, {
      push: (chunk) => {
        sandbox.#stderr = (sandbox.#stderr + chunk.toString('utf8')).slice(-STDERR_KEPT_CHARS)
      },
    })
    const child = started.child
    child.once('exit', () => launch.release())
    child.once('error', () => launch.release())
    const sandbox = new SandboxProcess(started)
    // A write to a sandbox that died fails with EPIPE; its exit is reported on its own.
    child.stdin?.on('error', () => undefined)
    pipeOf(child, SANDBOX_PIPES.largeToSandbox)?.on('error', () => undefined)
    let onReady: ((message: SandboxMessage | undefined) => void) | undefined
    for (const [fd, maxLineBytes, lane] of [
      [SANDBOX_PIPES.smallToServer, MAX_SMALL_LINE_BYTES, 'small'],
      [SANDBOX_PIPES.largeToServer, MAX_SANDBOX_LINE_BYTES, 'large'],
    ] as const) {
      const lines = new LineSplitter(maxLineBytes, {
        line: (line) => {
          const message = sandbox.#parse(line)
          if (onReady !== undefined) return onReady(message)
          if (message !== undefined) events.message(message)
        },
        overflow: () => sandbox.#outOfProtocol(),
      })
      const fromSandbox = pipeOf(child, fd)
      fromSandbox?.on('data', (chunk: Buffer) => {
        sandbox.#lastHeardAt = performance.now()
        sandbox.#received[lane] += chunk.length
        lines.push(chunk)
      })
      fromSandbox?.on('error', () => undefined)
    }
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error): void => fail(error.message, { spawnError: error.message })
      const onExit = (code: number | null, signal: string | null): void => {
        const report = (): void => fail(`it exited (${signal ?? code})`, { exitCode: code })
        // What bubblewrap said on its way out tells why; it may still be in the pipe.
        const stderr = child.stderr
        if (stderr === null || stderr.readableEnded) return report()
        const late = setTimeout(report, 500)
        stderr.once('end', () => {
          clearTimeout(late)
          report()
        })
      }
      const timer = setTimeout(() => fail('it did not start in time'), START_TIMEOUT_MS)
      let settled = false
      const settle = (): void => {
        settled = true
        clearTimeout(timer)
        onReady = undefined
        child.off('error', onError)
        child.off('exit', onExit)
      }
      const fail = (
        reason: string,
        how: { spawnError?: string; exitCode?: number | null } = {},
      ): void => {
        if (settled) return
        settle()
        started.kill()
        const confinement = launch.jailed
          ? confinementFailure({
              spawnError: how.spawnError,
              exitCode: how.exitCode ?? null,
              stderr: sandbox.#stderr,
            })
          : undefined
        reject(
          confinement ??
            new EitriError(
              'sandbox_reset',
              `The code sandbox could not start: ${reason}. ${sandbox.#stderr.trim()}`.trim(),
            ),
        )
      }
      child.once('error', onError)
      child.once('exit', onExit)
      onReady = (message) => {
        if (message?.type !== 'ready') return fail('it did not introduce itself')
        if (launch.jailed && child.pid !== undefined) sandbox.#hostPid = innermostChild(child.pid)
        settle()
        resolve()
      }
    })
    child.on('error', () => undefined)
    child.once('exit', (code, signal) => {
      sandbox.#exited = true
      sandbox.#toSandbox.close()
      if (sandbox.#closed) return
      const detail = sandbox.#stderr.trim().split('\n').slice(-3).join(' ')
      events.exit(
        `the sandbox process ended (${signal ?? `exit ${code}`})${detail === '' ? '' : `: ${detail}`}`,
      )
    })
    return sandbox
  }

  /**
   * The host process id of the Node that runs the sandbox (inside bubblewrap, the innermost of
   * its processes), for measurements and for tests that stop or kill it.
   */
  get pid(): number | undefined {
    return this.#hostPid ?? this.#child.pid
  }

  /**
   * When the sandbox last sent anything, in `performance.now()` time: a sandbox busy with large
   * messages is still heard from, a hung one is not.
   */
  get lastHeardAt(): number {
    return this.#lastHeardAt
  }

  /** What crossed the pipes so far, each way (for measurements and tests). */
  get traffic(): SandboxTraffic {
    return {
      toSandbox: this.#toSandbox.traffic,
      fromSandbox: { smallBytes: this.#received.small, largeBytes: this.#received.large },
    }
  }

  /** True until the process ends. */
  get alive(): boolean {
    return !this.#exited
  }

  /**
   * Sends one message; false when the process is gone. `written` is called once the message
   * has been handed to the pipe, or at once when it could not be sent. A large message waits
   * its turn among the large messages of other `key`s (sessions); small ones go at once.
   */
  send(message: HostMessage, written?: () => void, key?: string): boolean {
    if (this.#exited) {
      written?.()
      return false
    }
    return this.#toSandbox.write(message, {
      ...(key === undefined ? {} : { key }),
      ...(written === undefined ? {} : { written }),
    })
  }

  /** Kills the process (its state is only isolates) and waits for it. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true
    this.#toSandbox.close()
    if (!this.#exited) this.#process.kill()
    await this.#exit
  }

  /** One line from the sandbox, validated; undefined (and the sandbox killed) if it is not. */
  #parse(line: string): SandboxMessage | undefined {
    let json: unknown
    try {
      json = JSON.parse(line)
    } catch {
      this.#outOfProtocol()
      return undefined
    }
    const parsed = sandboxMessageSchema.safeParse(json)
    if (!parsed.success) {
      this.#outOfProtocol()
      return undefined
    }
    return parsed.data
  }

  /** A sandbox that speaks out of protocol is not trusted with anything more. */
  #outOfProtocol(): void {
    this.#stderr += '\neitri: the sandbox sent a message out of protocol and was ended.'
    this.#process.kill()
    // Whatever still writes to the channels (a child it left) gets EPIPE, not a reader.
    for (const fd of [SANDBOX_PIPES.smallToServer, SANDBOX_PIPES.largeToServer])
      pipeOf(this.#child, fd)?.destroy()
  }
}

/**
 * The last of the single line of descendants of `pid` (bubblewrap, its init, then the sandbox's
 * Node); `pid` itself when /proc cannot tell.
 */
function innermostChild(pid: number): number {
  let current = pid
  for (let depth = 0; depth < 8; depth++) {
    let children: string[]
    try {
      children = fs.readFileSync(`/proc/${current}/task/${current}/children`, 'utf8').split(' ')
    } catch {
      break
    }
    const [only, ...more] = children.filter((entry) => entry.trim() !== '')
    if (only === undefined || more.length > 0) break
    current = Number(only)
  }
  return current
}

/** The pipe at `fd` of the sandbox (spawned with every one of them piped). */
function pipeOf(child: ChildProcess, fd: number): Readable | Writable | undefined {
  return (child.stdio as readonly (Readable | Writable | null | undefined)[])[fd] ?? undefined
}
