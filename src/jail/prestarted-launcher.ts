/**
 * @module jail/prestarted-launcher
 * A cold start (a background job, a command the warm jail cannot take) used to be a chain of
 * programs before bubblewrap: a shell step that joins the memory cgroup, `nsenter` into the
 * layer host's mount namespace (which also drops to the jail's user), then bubblewrap. On a
 * machine where starting a program costs milliseconds, each link cost about as much as a plain
 * spawn. A launcher does all of those steps in one program, and is started ahead of its
 * command: the next cold start of a jail takes it ready, writes bubblewrap's argv to it, and it
 * execs bubblewrap at once. What is left on the command's path is bubblewrap itself; on overlays
 * even that starts ahead (prestarted-jail.ts gives a launcher bubblewrap's argv at once).
 *
 * The launcher is Perl (Perl is part of every Debian system, and calls any system call by
 * number; see layer-host-script.ts), forked from a resident spawner (launcher-spawner.ts, which
 * holds its code) rather than started by Node: it joins its cgroup (as the caller, who may
 * move itself there), enters the namespaces it was given (`setns`, as nsenter does), drops to
 * the jail's user (no supplementary groups, real, effective and saved ids), then waits on fd 3
 * for bubblewrap's options and argv (NUL-terminated words). It closes fd 3 and hands the
 * options to bubblewrap on a new fd 3 (`--args 3`, read and closed by bubblewrap), so the command
 * gets fds 0-2 only, as before (a jail started ahead also gets fd 4, which its waiter closes). Any step that fails ends it with status 125 and a message; a
 * launcher that ended is never used, and the start goes the old way (which reports the failure).
 * An end of fd 3 with no words ends it without running anything (the jail closed, or eitri died).
 *
 * Limits stay inside bubblewrap (`prlimit` after it made the user namespace): RLIMIT_NPROC set
 * before would count every process of the jail's user on the host, all jails together.
 */
import type { Writable } from 'node:stream'
import { hideOptions } from '../bubblewrap/hidden-args.ts'
import { launcherSpawner, type ForkedLauncher } from './launcher-spawner.ts'
import type { MemoryCgroup, MemoryCgroups } from './memory-cgroup.ts'

/** What a launcher does before it waits: the part of a start that does not depend on the command. */
export interface LauncherShape {
  /** Namespaces to enter, in order (a layer host's: its user namespace first, then its mounts). */
  readonly namespaces: readonly { readonly type: 'user' | 'mnt'; readonly path: string }[]
  /** The jail's user to become (a root caller's jail); none when the jail runs as the caller. */
  readonly drop?: { readonly uid: number; readonly gid: number } | undefined
  /** The memory limit of its cgroup (one is made where the jail can). */
  readonly memoryBytes: number
}

function keyOf(shape: LauncherShape): string {
  return JSON.stringify([shape.namespaces, shape.drop ?? null, shape.memoryBytes])
}

/** Sets whether a stream's handle keeps the event loop alive. */
function hold(stream: unknown, held: boolean): void {
  const handle = stream as { ref?: () => void; unref?: () => void } | null
  if (held) handle?.ref?.()
  else handle?.unref?.()
}

/** One launcher waiting for its argv; see the module comment. */
export class PrestartedLauncher {
  readonly child: ForkedLauncher
  readonly memoryCgroup: MemoryCgroup | undefined
  readonly key: string
  #ended = false
  #used = false

  /**
   * `readiness`: fd 4 is a pipe back to eitri, passed through to the program it runs (a jail
   * started ahead's waiter, which signals on it and closes it before it runs the command). Never
   * for a launcher that execs bubblewrap on the command itself: the command would inherit it.
   */
  constructor(
    shape: LauncherShape,
    memoryCgroup: MemoryCgroup | undefined,
    options: { readonly readiness?: boolean } = {},
  ) {
    this.key = keyOf(shape)
    this.memoryCgroup = memoryCgroup
    const steps = [
      ...(memoryCgroup === undefined ? [] : [`cgroup=${memoryCgroup.procsFile}`]),
      ...shape.namespaces.map((namespace) => `${namespace.type}=${namespace.path}`),
      ...(shape.drop === undefined ? [] : [`drop=${shape.drop.uid}:${shape.drop.gid}`]),
    ]
    // As a jailed process's own start: its own process group, fds 0-2 for the program, fd 3
    // for the argv, nothing of the caller's environment (and fd 4 for a waiter's readiness).
    this.child = launcherSpawner().fork(steps, options.readiness === true)
    const ended = (): void => {
      this.#ended = true
    }
    this.child.once('error', ended)
    this.child.once('exit', ended)
    for (const stream of this.child.stdio) {
      ;(stream as NodeJS.EventEmitter | null)?.on('error', () => undefined)
    }
    this.hold(false)
  }

  /** True while it waits, unused: it has not ended (its argv waits in its pipe until it runs). */
  get ready(): boolean {
    return !this.#used && !this.#ended
  }

  /**
   * Makes it exec `program` with `args`; the caller adopts {@link child} in the same tick (its
   * events are not missed). False when it cannot be used: ended, used, or an argument no
   * program can receive (a NUL).
   */
  run(
    program: string,
    args: readonly string[],
    options: { readonly hold?: boolean } = {},
  ): boolean {
    const hidden = hideOptions(args)
    const words = [String(hidden.options.length), ...hidden.options, program, ...hidden.argv]
    if (!this.ready || words.some((word) => word.includes('\0'))) return false
    this.#used = true
    // A jail started ahead (prestarted-jail.ts) is held only once its command is known.
    this.hold(options.hold !== false)
    ;(this.child.stdio[3] as Writable).end(words.map((word) => `${word}\0`).join(''))
    return true
  }

  /**
   * Ends it unused: no program runs, and its group is killed. Its cgroup is removed too, unless
   * the caller starts in it the usual way (`keepCgroup`), and removes it after.
   */
  discard(options: { keepCgroup?: boolean } = {}): void {
    if (this.#used) return
    this.#used = true
    ;(this.child.stdio[3] as Writable | null)?.end()
    if (!this.#ended) this.child.kill('SIGKILL')
    if (options.keepCgroup !== true) void this.memoryCgroup?.remove()
  }

  /** True once its process ended (or never started). */
  get ended(): boolean {
    return this.#ended
  }

  /** Whether it keeps the event loop alive: only once it runs a program. */
  hold(held: boolean): void {
    if (held) this.child.ref()
    else this.child.unref()
    for (const stream of this.child.stdio) hold(stream, held)
  }
}

/** A jail's launcher started ahead of its next cold start (at most one). */
export class PrestartedLaunchers {
  readonly #memory: MemoryCgroups
  #waiting: PrestartedLauncher | undefined
  #closed = false

  constructor(memory: MemoryCgroups) {
    this.#memory = memory
  }

  /** The waiting launcher, if it is ready for `shape`; another one waiting is ended. */
  take(shape: LauncherShape): PrestartedLauncher | undefined {
    const waiting = this.#waiting
    this.#waiting = undefined
    if (waiting === undefined) return undefined
    if (waiting.ready && waiting.key === keyOf(shape)) return waiting
    waiting.discard()
    return undefined
  }

  /** Starts a launcher for `shape`, unless one waits for it already. */
  prepare(shape: LauncherShape): void {
    if (this.#closed) return
    if (this.#waiting?.ready === true && this.#waiting.key === keyOf(shape)) return
    this.#waiting?.discard()
    this.#waiting = new PrestartedLauncher(shape, this.#memory.create(shape.memoryBytes))
  }

  /** Ends the waiting launcher; none is started after. */
  close(): void {
    this.#closed = true
    this.#waiting?.discard()
    this.#waiting = undefined
  }
}
