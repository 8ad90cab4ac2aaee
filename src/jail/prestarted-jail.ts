/**
 * @module jail/prestarted-jail
 * A cold start's whole jail, started ahead of its command, and kept for the next one. The
 * launcher started ahead (prestarted-launcher.ts) took the cgroup, namespace and user steps off
 * a cold start's path; what was left was bubblewrap's own start with the full hardening, several
 * milliseconds of CPU on a small VM. So after a cold start the jail starts the next one
 * entirely: the launcher execs bubblewrap at once, with the argv a cold start would get except
 * for the command, which is the job waiter (job-waiter-script.ts) as the jail's PID 1.
 *
 * The waiter runs one job after another (decision 0042): a job is its child, with pipes of its
 * own relayed to eitri as frames; when the job's first process ends, the waiter kills and reaps
 * every other process of the jail, says how the job ended, empties /tmp and /dev/shm, removes
 * SysV IPC objects and checks nothing a job can change in it changed, then says it is ready
 * again. Only then is the jail given back for the next job of the same sharer, access, limits
 * and binds; back-to-back jobs then cost no bubblewrap start at all. A waiter that can be traced
 * (not the execute-only copy of Perl) runs one job and ends.
 *
 * The workspace: the jail binds a mount point of its own, made shared in the layer host (as a
 * warm jail's is); each job's fresh overlay is mounted on it only when the job is known (or
 * ahead of it, while the jail waits), reaches the running jail, and is unmounted and read back
 * after the job as a warm jail's command's is.
 */
import type { MemoryAccount, MemoryCgroup } from './memory-cgroup.ts'
import type { ForkedLauncher } from './launcher-spawner.ts'
import type { PrestartedLauncher } from './prestarted-launcher.ts'
import { jobRecord, WaiterFrames, WaiterJob } from './waiter-job.ts'

/** Perl inside the jail (the jail's /usr is the host's, read-only). */
export const JAIL_PERL = '/usr/bin/perl'

/** A jail waiting for its next job; see the module comment. */
export class PrestartedJail {
  /** What a start must match to use it (access, limits, binds); and its {@link owner}. */
  readonly key: string
  /** The shared mount point bound at the jail's workspace; each job's overlay goes on it. */
  readonly point: string
  /** Resolves once its waiter said it is ready the first time, or it ended (then {@link ready} is false). */
  readonly started: Promise<void>
  /** How many jobs it ran. */
  jobs = 0
  readonly #launcher: PrestartedLauncher
  readonly #frames = new WaiterFrames()
  #record: Buffer | undefined
  /** The job it runs now, from its start until the waiter said it is ready again. */
  #job: WaiterJob | undefined
  #busy = false
  #discarded = false
  #signalled = false
  #taken = false
  #owner: string | undefined
  #reusable: PromiseWithResolvers<boolean> | undefined
  #oomKillsBefore = 0

  /** Starts bubblewrap (`bwrap` with `args`, whose command is the waiter) through `launcher`. */
  constructor(
    launcher: PrestartedLauncher,
    key: string,
    point: string,
    bwrap: string,
    args: readonly string[],
  ) {
    this.#launcher = launcher
    this.key = key
    this.point = point
    const child = launcher.child
    this.started = new Promise((resolve) => {
      const readiness = child.stdio[4] as NodeJS.ReadableStream | null | undefined
      readiness?.once('data', () => {
        this.#signalled = true
        resolve()
      })
      readiness?.once('end', resolve)
      child.once('exit', () => resolve())
      child.once('error', () => resolve())
      if (launcher.ended || readiness === null || readiness === undefined) resolve()
    })
    child.stdout.on('data', (chunk: Buffer) => this.#read(chunk))
    const ended = (): void => {
      this.#job?.lost()
      this.#job = undefined
      this.#reusable?.resolve(false)
    }
    child.once('exit', ended)
    child.once('error', ended)
    // Not held: an idle jail keeps no event loop alive.
    if (!launcher.run(bwrap, args, { hold: false })) this.#discarded = true
  }

  /** True once its processes ended (or never started). */
  get ended(): boolean {
    return this.#launcher.ended
  }

  /** True once its waiter said it waits for a job (it may have ended since: {@link ready}). */
  get signalled(): boolean {
    return this.#signalled
  }

  /** True once a start took it (its job may not be known yet). */
  get taken(): boolean {
    return this.#taken
  }

  /**
   * The sharer whose job it ran first (`''`: the jail's own caller); it takes no other's job.
   * Undefined until a start took it.
   */
  get owner(): string | undefined {
    return this.#owner
  }

  /** Marks it taken by a start for `sharer`: nothing is to be prepared for it any more. */
  take(sharer = ''): void {
    this.#taken = true
    this.#owner ??= sharer
  }

  /** The launcher's process (bubblewrap's, once it runs). */
  get launcherChild(): ForkedLauncher {
    return this.#launcher.child
  }

  /** The job a start runs, once {@link run} said yes (the launcher before). */
  get child(): WaiterJob | ForkedLauncher {
    return this.#job ?? this.#launcher.child
  }

  get memoryCgroup(): MemoryCgroup | undefined {
    return this.#launcher.memoryCgroup
  }

  /**
   * The memory cgroup as one job sees it: the kernel's kills since the job started, and kept
   * when the job ends (the jail may take the next one; it is removed when the jail ends).
   */
  jobMemory(): MemoryAccount | undefined {
    const cgroup = this.memoryCgroup
    if (cgroup === undefined) return undefined
    return {
      launch: (command, args) => cgroup.launch(command, args),
      oomKills: () => cgroup.oomKills() - this.#oomKillsBefore,
      remove: async () => {
        if (this.ended || this.#discarded) await cgroup.remove()
      },
    }
  }

  /**
   * True while it waits for a job: its processes have not ended, and no job runs in it (its
   * process id may not be known yet: the spawner's answer is on its way, and a kill waits for it).
   */
  get ready(): boolean {
    return !this.#busy && !this.#discarded && !this.#launcher.ended
  }

  /**
   * Sets the job it runs, in `cwd` with exactly `environment`. False when no program can
   * receive it (a NUL in a word): the start then goes the old way.
   */
  command(
    cwd: string,
    environment: Readonly<Record<string, string>>,
    argv: readonly string[],
  ): boolean {
    this.#record = jobRecord(cwd, environment, argv)
    return this.#record !== undefined
  }

  /**
   * Sends the job set by {@link command} (bubblewrap's argv is the fallback's, unused here);
   * the caller adopts {@link child} in the same tick. False when it cannot be used.
   */
  run(_program?: string, _args?: readonly string[]): boolean {
    const record = this.#record
    if (!this.ready || record === undefined) return false
    const stdin = this.#launcher.child.stdin
    this.#record = undefined
    this.#busy = true
    this.#reusable = Promise.withResolvers<boolean>()
    this.#oomKillsBefore = this.memoryCgroup?.oomKills() ?? 0
    this.jobs++
    this.#job = new WaiterJob({
      send: (bytes) => {
        if (this.#launcher.ended) return false
        stdin.write(bytes)
        return true
      },
      end: () => this.#kill(),
      hold: (held) => this.#launcher.hold(held),
    })
    this.#launcher.hold(true)
    stdin.write(record)
    return true
  }

  /**
   * Resolves once the job it runs ended and the jail is ready for the next one (true), or
   * ended instead (false).
   */
  reusable(): Promise<boolean> {
    return this.#reusable?.promise ?? Promise.resolve(false)
  }

  /** Given back after a job: free for the next start. */
  untake(): void {
    this.#taken = false
  }

  /** Ends it unused; its cgroup is removed too unless the caller starts in it (`keepCgroup`). */
  discard(options: { keepCgroup?: boolean } = {}): void {
    if (this.#discarded) return
    this.#discarded = true
    this.#kill()
    if (options.keepCgroup !== true) void this.memoryCgroup?.remove()
  }

  #kill(): void {
    this.#launcher.child.stdin.end()
    if (!this.#launcher.ended) this.#launcher.child.kill('SIGKILL')
  }

  /** The waiter's frames: a job's output and end, and its word that it is ready again. */
  #read(chunk: Buffer): void {
    let frames
    try {
      frames = this.#frames.push(chunk)
    } catch {
      // Only the waiter writes here; anything else ends the jail.
      return this.discard()
    }
    for (const frame of frames) {
      if (frame.type === 'O') this.#job?.output('stdout', frame.payload)
      else if (frame.type === 'E') this.#job?.output('stderr', frame.payload)
      else if (frame.type === 'X') {
        this.#job?.exited(Number(frame.payload.toString()))
        this.#job = undefined
        this.#launcher.hold(false)
      } else if (frame.type === 'R' && this.#busy && this.#job === undefined) {
        this.#busy = false
        this.#reusable?.resolve(true)
      }
    }
  }
}
