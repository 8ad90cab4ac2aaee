/**
 * @module jail/prestarted-jails
 * The jails a Jail keeps started ahead of its next cold starts (prestarted-jail.ts). Two, so
 * that back-to-back background jobs each find one whose waiter is ready: with one, a job that
 * followed another closely took a jail still starting (Perl, bubblewrap's mounts, the waiter)
 * and waited for the rest of its start. Once one jail of this Jail said it is ready, they start
 * side by side (decision 0023): a start is a chain of programs that uses one CPU at most, and
 * back to back the jobs waited for one start after the other. Until then (the first, or after
 * one ended before it was ready) the next starts only once the previous one said it is ready,
 * so a start that fails stops the refill.
 *
 * A start takes the oldest one that said it is ready, else the oldest still starting (a start
 * under way is nearer its end than a new one). Jails for another key (access, limits, binds)
 * are ended when a start or a preparation asks for a different one.
 *
 * A jail whose job ended comes back (prestarted-jail.ts, decision 0042) and waits first in
 * line; one more than {@link AHEAD_JAILS} is ended. Jails out with a job count as waiting for
 * the refill; when all are out and none waits, it gives them {@link COMES_BACK_MS} to come back
 * (back-to-back jobs) before it starts another (jobs side by side).
 *
 * Idle: started-ahead jails (each a bubblewrap, its init, Perl and a memory cgroup) that no
 * start took for {@link AHEAD_IDLE_MS} are ended; the next cold start goes the old way and
 * starts them ahead again.
 */
import type { JailBind, JailLimits } from '../bubblewrap/jail-spec.ts'
import type { PrestartedJail } from './prestarted-jail.ts'

/** How many jails wait ahead at most. */
export const AHEAD_JAILS = 2

/**
 * How long the refill waits, when every jail is out with a job, for one to come back before it
 * starts another: longer than a short job's end and the waiter's cleanup, shorter than the gap
 * before an agent's next job.
 */
export const COMES_BACK_MS = 150

/** How long unused jails started ahead wait before they are ended. */
export const AHEAD_IDLE_MS = 60_000

interface Wanted {
  readonly key: string
  readonly make: () => Promise<PrestartedJail>
}

/** A jail's cold jails started ahead of its next cold starts; see the module comment. */
export class PrestartedJails {
  /** Gives back a point no start took (unmounted and removed). */
  readonly #release: (point: string) => void
  readonly #idleMs: number
  readonly #capacity: number
  #waiting: PrestartedJail[] = []
  /** Taken by a job, and given back once it ended, if its jail takes another. */
  readonly #out = new Set<PrestartedJail>()
  /** Told when a jail out comes back or is lost (the refill waits for it: {@link #comesBack}). */
  #returned: (() => void) | undefined
  readonly #comesBackMs: number
  /** What the jails started next are for; none after an idle end, until the next start. */
  #wanted: Wanted | undefined
  #preparing = false
  /** True while the last jail that settled said it is ready: the next may start beside it. */
  #proven = false
  #closed = false
  #idle: NodeJS.Timeout | undefined

  constructor(
    release: (point: string) => void,
    options: {
      readonly idleMs?: number
      readonly capacity?: number
      readonly comesBackMs?: number
    } = {},
  ) {
    this.#release = release
    this.#idleMs = options.idleMs ?? AHEAD_IDLE_MS
    this.#comesBackMs = options.comesBackMs ?? COMES_BACK_MS
    this.#capacity = options.capacity ?? AHEAD_JAILS
  }

  /** How many wait now (started or starting); for tests. */
  get waiting(): number {
    return this.#waiting.length
  }

  /**
   * A waiting jail for `key` and `sharer` (the oldest ready one, else the oldest); others' keys
   * are ended.
   */
  take(key: string, sharer = ''): PrestartedJail | undefined {
    this.#touch()
    this.#keep(key)
    // A jail that ran a job serves only that job's sharer (decision 0042); a new one any.
    const mine = this.#waiting.filter((jail) => jail.owner === undefined || jail.owner === sharer)
    const chosen = mine.find((jail) => jail.signalled) ?? mine[0]
    if (chosen === undefined) {
      // All are another sharer's: the oldest makes room for a new one, and this start goes the
      // old way.
      const other = this.#waiting.shift()
      if (other !== undefined) this.#end(other)
      return undefined
    }
    this.#waiting = this.#waiting.filter((jail) => jail !== chosen)
    chosen.take(sharer)
    this.#out.add(chosen)
    return chosen
  }

  /**
   * A jail whose job ended and that is ready for the next one: it waits again, first in line,
   * unless this closed, another key is wanted now, or enough wait already.
   */
  giveBack(jail: PrestartedJail): void {
    this.#out.delete(jail)
    this.#returned?.()
    if (
      this.#closed ||
      !jail.ready ||
      (this.#wanted !== undefined && this.#wanted.key !== jail.key) ||
      this.#waiting.length >= this.#capacity
    ) {
      return this.#end(jail)
    }
    jail.untake()
    this.#waiting.unshift(jail)
    this.#touch()
  }

  /** A jail that was taken and will not come back (it ended with or after its job). */
  lost(jail: PrestartedJail): void {
    this.#out.delete(jail)
    this.#returned?.()
  }

  /**
   * Keeps jails for `key` started ahead with `make` until {@link AHEAD_JAILS} wait (side by
   * side once one said it is ready; see the module comment). A failure to make one is not reported: the next start goes the
   * old way and reports it.
   */
  async prepare(key: string, make: () => Promise<PrestartedJail>): Promise<void> {
    if (this.#closed) return
    this.#touch()
    this.#wanted = { key, make }
    if (this.#preparing) return
    this.#preparing = true
    try {
      for (;;) {
        const wanted = this.#wanted
        if (this.#closed || wanted === undefined) return
        this.#keep(wanted.key)
        // Jails out with a job come back when it ends, so they count as waiting.
        if (this.#waiting.length >= this.#capacity - this.#out.size) {
          if (this.#waiting.length > 0 || this.#out.size === 0) return
          // None waits: one starts unless a job's jail comes back soon (jobs back to back,
          // which would otherwise start a jail each), or the next job would go the old way.
          if (await this.#comesBack()) continue
          if (this.#waiting.length > 0) return
        }
        const made = await wanted.make()
        if (this.#closed || this.#wanted === undefined) return this.#end(made)
        this.#waiting.push(made)
        void made.started.then(() => {
          this.#proven = made.signalled
        })
        if (this.#proven) continue
        // Not known to start: the next one starts once this one is ready, not beside it.
        await made.started
        // It ended before it was ready: something is wrong; the old way will say what.
        if (made.ended && !made.signalled) return
      }
    } catch {
      // the old way reports it
    } finally {
      this.#preparing = false
    }
  }

  /** True when a jail out with a job came back (or ended) within {@link COMES_BACK_MS}. */
  #comesBack(): Promise<boolean> {
    const { promise, resolve } = Promise.withResolvers<boolean>()
    const timer = setTimeout(() => resolve(false), this.#comesBackMs)
    timer.unref()
    this.#returned = () => {
      clearTimeout(timer)
      resolve(true)
    }
    return promise.finally(() => {
      this.#returned = undefined
    })
  }

  /** Ends the waiting jails; none is started after. */
  close(): void {
    this.#closed = true
    this.#endAll()
  }

  /** Ends the waiting jails that are not for `key`, or that ended. */
  #keep(key: string): void {
    const kept: PrestartedJail[] = []
    for (const jail of this.#waiting) {
      if (jail.ready && jail.key === key) kept.push(jail)
      else this.#end(jail)
    }
    this.#waiting = kept
  }

  /** Restarts the idle clock: used now. */
  #touch(): void {
    if (this.#idle !== undefined) clearTimeout(this.#idle)
    this.#idle = setTimeout(() => {
      this.#idle = undefined
      // Until the next start asks again.
      this.#wanted = undefined
      this.#endAll()
    }, this.#idleMs)
    this.#idle.unref()
  }

  #endAll(): void {
    if (this.#idle !== undefined) clearTimeout(this.#idle)
    this.#idle = undefined
    for (const jail of this.#waiting) this.#end(jail)
    this.#waiting = []
  }

  #end(jail: PrestartedJail): void {
    jail.discard()
    this.#release(jail.point)
  }
}

/** What a jail started ahead must match: everything of its bubblewrap argv but the command. */
export function aheadKey(
  writable: boolean,
  limits: JailLimits,
  binds: readonly JailBind[],
): string {
  return JSON.stringify([writable, limits, binds])
}
