/**
 * @module eval/host/sandbox-process
 * The process that hosts the isolates, seen from the server: started with the server's own
 * Node, `--no-node-snapshot` (isolated-vm needs it) and an empty environment (no secret of the
 * server's is ever in it), spoken to over Node's IPC channel as JSON. Every message from it is
 * validated before use; when it dies, the owner is told and starts another.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { EitriError } from '../../errors/eitri-error.ts'
import { sandboxMessageSchema, type HostMessage, type SandboxMessage } from '../sandbox-protocol.ts'

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

/** What the owner of a sandbox process hears. */
export interface SandboxProcessEvents {
  readonly message: (message: SandboxMessage) => void
  /** The process ended without being closed. */
  readonly exit: (reason: string) => void
}

/** One running sandbox process. */
export class SandboxProcess {
  readonly #child: ChildProcess
  readonly #events: SandboxProcessEvents
  #stderr = ''
  #closed = false
  #exited = false
  readonly #exit: Promise<void>

  private constructor(child: ChildProcess, events: SandboxProcessEvents) {
    this.#child = child
    this.#events = events
    this.#exit = new Promise((resolve) => child.once('exit', () => resolve()))
  }

  /**
   * Starts a sandbox process and waits until it is ready.
   *
   * @throws EitriError `sandbox_reset` when it cannot start.
   */
  static async start(
    events: SandboxProcessEvents,
    nodePath: string = process.execPath,
  ): Promise<SandboxProcess> {
    const child = spawn(
      nodePath,
      ['--no-node-snapshot', '--disable-warning=ExperimentalWarning', SANDBOX_MAIN],
      { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'json', env: {}, cwd: '/' },
    )
    const sandbox = new SandboxProcess(child, events)
    child.stderr?.on('data', (chunk: Buffer) => {
      sandbox.#stderr = (sandbox.#stderr + chunk.toString('utf8')).slice(-STDERR_KEPT_CHARS)
    })
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error): void => fail(error.message)
      const onExit = (code: number | null, signal: string | null): void =>
        fail(`it exited (${signal ?? code})`)
      const timer = setTimeout(() => fail('it did not start in time'), START_TIMEOUT_MS)
      const settle = (): void => {
        clearTimeout(timer)
        child.off('error', onError)
        child.off('exit', onExit)
      }
      const fail = (reason: string): void => {
        settle()
        child.kill('SIGKILL')
        reject(
          new EitriError(
            'sandbox_reset',
            `The code sandbox could not start: ${reason}. ${sandbox.#stderr.trim()}`.trim(),
          ),
        )
      }
      child.once('error', onError)
      child.once('exit', onExit)
      child.once('message', (message) => {
        settle()
        if (sandboxMessageSchema.safeParse(message).data?.type === 'ready') resolve()
        else fail('it did not introduce itself')
      })
    })
    child.on('message', (raw) => sandbox.#receive(raw))
    child.on('error', () => undefined)
    child.once('exit', (code, signal) => {
      sandbox.#exited = true
      if (sandbox.#closed) return
      const detail = sandbox.#stderr.trim().split('\n').slice(-3).join(' ')
      events.exit(
        `the sandbox process ended (${signal ?? `exit ${code}`})${detail === '' ? '' : `: ${detail}`}`,
      )
    })
    return sandbox
  }

  /** The process id, for measurements. */
  get pid(): number | undefined {
    return this.#child.pid
  }

  /** True until the process ends. */
  get alive(): boolean {
    return !this.#exited
  }

  /** Sends one message; false when the process is gone. */
  send(message: HostMessage): boolean {
    if (this.#exited || !this.#child.connected) return false
    try {
      this.#child.send(message)
      return true
    } catch {
      return false
    }
  }

  /** Kills the process (its state is only isolates) and waits for it. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true
    if (!this.#exited) this.#child.kill('SIGKILL')
    await this.#exit
  }

  #receive(raw: unknown): void {
    const parsed = sandboxMessageSchema.safeParse(raw)
    if (!parsed.success) {
      // A sandbox that speaks out of protocol is not trusted with anything more.
      this.#child.kill('SIGKILL')
      return
    }
    this.#events.message(parsed.data)
  }
}
