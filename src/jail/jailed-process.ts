/**
 * @module jail/jailed-process
 * One bubblewrap process: spawned without a shell as the jail's host identity, in its own
 * process group, with only stdin, stdout and stderr, its output bounded, and killed (group
 * and PID namespace) at its deadline or when cancelled.
 */
import fs from 'node:fs'
import { BoundedOutput } from '../util/bounded-output.ts'
import { BoundedChild, type ProgramChild } from '../util/bounded-spawn.ts'
import { enteringLaunch, mountingLaunch, type CallerMount } from '../bubblewrap/caller-mounts.ts'
import { hideOptions, OPTIONS_FD, optionsData, SECCOMP_FD } from '../bubblewrap/hidden-args.ts'
import type { HostIdentity } from '../bubblewrap/jail-identity.ts'
import type { MemoryAccount } from './memory-cgroup.ts'
import type { Writable } from 'node:stream'
import { WaiterJob } from './waiter-job.ts'

/**
 * A start made ahead (prestarted-launcher.ts, prestarted-jail.ts): `run` makes it go on with
 * this start (true) or says it cannot (then the usual chain starts, in the same cgroup).
 */
export interface PrestartedStart {
  readonly child: ProgramChild
  run(program: string, args: readonly string[]): boolean
  discard(options?: { keepCgroup?: boolean }): void
}

/** Drops root to the jail's user after the cgroup step, which must run as the caller. */
const SETPRIV = 'setpriv'

/**
 * How long a program that reached its deadline gets between the interrupt and the kill, as in
 * the warm jail (jail-supervisor-main.mjs): test runners and builds answer Ctrl-C by printing
 * their summary, which a kill would lose.
 */
const INTERRUPT_GRACE_MS = 1000

/** How a jailed process ended. */
export interface JailedExit {
  /** The program's exit code; null when it was killed by a signal. */
  readonly exitCode: number | null
  readonly signal: string | null
  readonly timedOut: boolean
  readonly cancelled: boolean
  readonly durationMs: number
  /** Set when bubblewrap itself could not be started (not installed, not executable). */
  readonly spawnError?: string
  /** Processes the kernel killed for going over the memory cgroup's limit (when there was one). */
  readonly oomKills?: number
}

/** What starting one needs. */
export interface JailedProcessOptions {
  readonly bwrap: string
  readonly args: readonly string[]
  readonly identity: HostIdentity
  /** Sources the caller mounts for the jail's user before bubblewrap starts (root callers). */
  readonly callerMounts?: readonly CallerMount[] | undefined
  /**
   * Starts bubblewrap inside another mount namespace (a layer host's: `nsenter …`), where any
   * caller mounts are already made.
   */
  readonly enter?: readonly string[] | undefined
  readonly maxOutputChars: number
  /** Undefined: no deadline (a background job, stopped by `kill`). */
  readonly timeoutMs?: number | undefined
  readonly signal?: AbortSignal | undefined
  /** Written to the program's stdin, which is then closed. */
  readonly stdin?: string | undefined
  /** Keeps stdin open for `write` (a supervisor that reads commands). */
  readonly keepStdinOpen?: boolean | undefined
  /** Called with every chunk as it arrives (background jobs keep a rolling window). */
  readonly onOutput?: ((stream: 'stdout' | 'stderr', chunk: Buffer) => void) | undefined
  /** The memory cgroup it runs in, removed when it ended. */
  readonly memoryCgroup?: MemoryAccount | undefined
  /**
   * A jail started ahead (prestarted-jail.ts), told its command already, or a launcher started
   * ahead (prestarted-launcher.ts) that joined `memoryCgroup`, entered the
   * namespaces of `enter` and became the jail's user already: it execs bubblewrap itself, in
   * place of that chain. Not used when it cannot run (then the chain starts as usual).
   */
  readonly prestarted?: PrestartedStart | undefined
  /**
   * The seccomp program bubblewrap reads on {@link SECCOMP_FD} (its args say `--seccomp`); a
   * start with one takes no launcher started ahead, which passes no such descriptor.
   */
  readonly seccompProgram?: Buffer | undefined
}

/** A running jailed process. */
export class JailedProcess {
  readonly stdout: BoundedOutput
  readonly stderr: BoundedOutput
  /** Resolves once the process and every stream it held have ended. */
  readonly exited: Promise<JailedExit>
  readonly #child: BoundedChild<ProgramChild>
  readonly #memoryCgroup: MemoryAccount | undefined

  constructor(options: JailedProcessOptions) {
    this.stdout = new BoundedOutput(options.maxOutputChars)
    this.stderr = new BoundedOutput(options.maxOutputChars)
    // With caller mounts, root starts the mount step, which drops to the jail's user itself.
    const enter = options.enter ?? []
    const mounting =
      enter.length > 0 || (options.identity.dropped && (options.callerMounts ?? []).length > 0)
    // bubblewrap's options (host paths) go through a descriptor, not its command line.
    const hidden = hideOptions(options.args)
    let launch =
      enter.length > 0
        ? enteringLaunch(enter, options.bwrap, hidden.argv, options.identity)
        : mounting
          ? mountingLaunch(options.bwrap, hidden.argv, options.identity, options.callerMounts ?? [])
          : { command: options.bwrap, args: [...hidden.argv] }
    let dropOnSpawn = options.identity.dropped && !mounting
    this.#memoryCgroup = options.memoryCgroup
    if (options.memoryCgroup !== undefined) {
      // Entering the cgroup needs the caller's rights, so root drops to the jail's user after.
      if (dropOnSpawn) {
        launch = {
          command: SETPRIV,
          args: [
            `--reuid=${options.identity.uid}`,
            `--regid=${options.identity.gid}`,
            '--clear-groups',
            '--',
            launch.command,
            ...launch.args,
          ],
        }
        dropOnSpawn = false
      }
      launch = options.memoryCgroup.launch(launch.command, launch.args)
    }
    const seccomp = options.seccompProgram
    if (seccomp !== undefined && options.prestarted !== undefined)
      throw new Error('a start with a seccomp program cannot take a start made ahead')
    const prestarted =
      options.prestarted?.run(options.bwrap, options.args) === true ? options.prestarted : undefined
    // Unusable (it ended meanwhile): the usual chain starts in the same cgroup.
    if (prestarted === undefined) options.prestarted?.discard({ keepCgroup: true })
    this.#child = new BoundedChild<ProgramChild>(launch.command, launch.args, {
      spawned: prestarted?.child,
      // After fds 0-2: the options' pipe (fd 3), and the seccomp program's (fd 4).
      extraPipes: seccomp !== undefined ? 2 : hidden.options.length > 0 ? 1 : 0,
      // Only fds 0-2 reach bubblewrap; Node marks its own descriptors close-on-exec. Its own
      // process group (BoundedChild), so a kill reaches everything it started on the host side.
      env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
      ...(dropOnSpawn ? { uid: options.identity.uid, gid: options.identity.gid } : {}),
      stdin: options.stdin ?? '',
      keepStdinOpen: options.keepStdinOpen,
      stdout: this.stdout,
      stderr: this.stderr,
      onOutput: options.onOutput,
      timeoutMs: options.timeoutMs,
      interrupt: () => this.#interrupt(),
      interruptGraceMs: INTERRUPT_GRACE_MS,
      signal: options.signal,
    })
    if (prestarted === undefined && hidden.options.length > 0) {
      const optionsPipe = this.#child.child.stdio[OPTIONS_FD] as Writable | null | undefined
      optionsPipe?.on('error', () => undefined)
      optionsPipe?.end(optionsData(hidden.options))
    }
    if (seccomp !== undefined) {
      const seccompPipe = this.#child.child.stdio[SECCOMP_FD] as Writable | null | undefined
      seccompPipe?.on('error', () => undefined)
      seccompPipe?.end(seccomp)
    }
    this.exited = this.#child.exited.then((exit) => {
      const oomKills = this.oomKills()
      void this.#memoryCgroup?.remove()
      return {
        exitCode: exit.exitCode,
        signal: exit.signal,
        timedOut: exit.timedOut,
        cancelled: exit.cancelled,
        durationMs: exit.durationMs,
        ...(exit.spawnError === undefined ? {} : { spawnError: exit.spawnError }),
        ...(oomKills === 0 ? {} : { oomKills }),
      }
    })
  }

  /** Writes to the program's stdin (only when started with `keepStdinOpen`). */
  write(text: string): void {
    this.#child.write(text)
  }

  /** True when a memory cgroup bounds its memory (else RLIMIT_DATA does). */
  get inMemoryCgroup(): boolean {
    return this.#memoryCgroup !== undefined
  }

  /** Processes the kernel killed so far for going over the memory cgroup's limit. */
  oomKills(): number {
    return this.#memoryCgroup?.oomKills() ?? 0
  }

  /** bubblewrap's host process id (undefined if it never started). */
  get pid(): number | undefined {
    return this.#child.pid
  }

  /** True until the process has exited. */
  get running(): boolean {
    return this.#child.running
  }

  /**
   * Interrupts the program in the jail (SIGINT to its process group, as Ctrl-C would): it runs
   * below bubblewrap and bubblewrap's init, in a session of its own (`--new-session`). False
   * when it cannot be found.
   */
  #interrupt(): boolean {
    if (!this.running) return false
    // A job of a jail started ahead: its waiter signals the job's group.
    if (this.#child.child instanceof WaiterJob) return this.#child.child.kill('SIGINT')
    return this.#signalProgram('SIGINT')
  }

  /** Sends `signal` to the program below bubblewrap's init; false when it cannot be found. */
  #signalProgram(signal: NodeJS.Signals): boolean {
    const pid = this.#child.pid
    if (pid === undefined) return false
    let interrupted = false
    for (const init of childrenOf(pid)) {
      for (const program of childrenOf(init)) {
        // Its group when it leads one, else the program alone.
        for (const target of [-program, program]) {
          try {
            process.kill(target, signal)
            interrupted = true
            break
          } catch {
            // not a group leader, or gone: the kill after the grace ends it either way
          }
        }
      }
    }
    return interrupted
  }

  /**
   * Ends the program as a shell's pipeline does when its reader exits: SIGPIPE to the program
   * (its process group), then the reading end of its stdout is closed, so whatever ignores
   * SIGPIPE gets EPIPE at its next write. The signal comes first because Node's pipes are
   * socket pairs: closing one with data unread makes the writer's next write fail with
   * ECONNRESET instead ("yes: standard output: Connection reset by peer", exit 1).
   */
  endAsPipeline(): void {
    if (this.running) this.#signalJail('SIGPIPE')
    this.#child.closeStdout()
  }

  /**
   * Sends `signal` to every process of the jail's process group (bubblewrap's init leads it:
   * `bash -c 'yes | tr y n'` is one group), else to the program alone. The init itself, PID 1
   * of its namespace, ignores it: the kernel delivers only SIGKILL and SIGSTOP to a namespace's
   * init from outside.
   */
  #signalJail(signal: NodeJS.Signals): void {
    const pid = this.#child.pid
    if (pid === undefined) return
    for (const init of childrenOf(pid)) {
      try {
        process.kill(-init, signal)
        return
      } catch {
        // not a group leader, or gone
      }
    }
    this.#signalProgram(signal)
  }

  /**
   * Kills bubblewrap's whole process group. bubblewrap's PID 1 dies with it
   * (`--die-with-parent`), and with PID 1 the kernel ends every process in the namespace,
   * including ones that called `setsid` or were double-forked.
   */
  kill(): void {
    this.#child.kill()
  }
}

/** The children of `pid` (every thread's), read from /proc; none once it is gone. */
function childrenOf(pid: number): number[] {
  try {
    return fs
      .readdirSync(`/proc/${pid}/task`)
      .flatMap((task) => fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' '))
      .filter((word) => word.trim() !== '')
      .map(Number)
  } catch {
    return []
  }
}
