/**
 * @module jail/overlay/mounted-ahead
 * Which of a workspace's mount points hold an overlay mounted ahead of its command
 * (prepared-layer.ts, decision 0019), and which have a command's overlay on them now: nothing
 * is mounted ahead over a point in use, and at most one overlay waits on a point. Taking one
 * asks whether what it was made from still holds; one that no longer does is unmounted and let
 * go of, so the command mounts a fresh one.
 *
 * Apart from the overlay workspace so that this state has one owner; the workspace mounts the
 * layers and hands in how to unmount a point and let go of a layer.
 */
import type { PendingLayer, PreparedLayer } from './prepared-layer.ts'

/** One workspace's overlays mounted ahead; see the module comment. */
export class MountedAhead {
  /** Overlays mounted ahead of their commands, by mount point. */
  readonly #prepared = new Map<string, PreparedLayer>()
  /** Points a command's overlay is mounted on now: nothing is mounted ahead over it. */
  readonly #inUse = new Set<string>()
  readonly #unmount: (mountPoint: string) => Promise<void>
  readonly #drop: (pending: PendingLayer) => void

  constructor(options: {
    /** Unmounts what is mounted on a point (a failure is ignored). */
    readonly unmount: (mountPoint: string) => Promise<void>
    /** Lets go of a layer that was never handed to a command. */
    readonly drop: (pending: PendingLayer) => void
  }) {
    this.#unmount = options.unmount
    this.#drop = options.drop
  }

  /** Whether an overlay may be mounted ahead on `mountPoint`: none is there, none in use. */
  isFree(mountPoint: string): boolean {
    return !this.#prepared.has(mountPoint) && !this.#inUse.has(mountPoint)
  }

  /** Records the overlay mounted ahead on `mountPoint`. */
  hold(mountPoint: string, prepared: PreparedLayer): void {
    this.#prepared.set(mountPoint, prepared)
  }

  /** Marks `mountPoint` as holding a command's overlay, or (`inUse` false) no longer. */
  setInUse(mountPoint: string, inUse: boolean): void {
    if (inUse) this.#inUse.add(mountPoint)
    else this.#inUse.delete(mountPoint)
  }

  /**
   * The overlay mounted ahead on `mountPoint`, if `holds` says what it was made from still
   * holds; else it is discarded and the answer is undefined.
   */
  async take(
    mountPoint: string,
    holds: (prepared: PreparedLayer) => Promise<boolean>,
  ): Promise<PendingLayer | undefined> {
    const prepared = this.#prepared.get(mountPoint)
    if (prepared === undefined) return undefined
    if (!(await holds(prepared))) {
      await this.discard(mountPoint)
      return undefined
    }
    this.#prepared.delete(mountPoint)
    return prepared.pending
  }

  /** Unmounts and lets go of the overlay mounted ahead on `mountPoint`, if any. */
  async discard(mountPoint: string): Promise<void> {
    const prepared = this.#prepared.get(mountPoint)
    if (prepared === undefined) return
    this.#prepared.delete(mountPoint)
    await this.#unmount(mountPoint)
    this.#drop(prepared.pending)
  }

  /** Lets go of every overlay mounted ahead's fork lease (their mounts end with the host). */
  close(): void {
    for (const prepared of this.#prepared.values()) prepared.pending.release?.()
    this.#prepared.clear()
  }
}
