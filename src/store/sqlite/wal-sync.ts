/**
 * @module store/sqlite/wal-sync
 * Makes SQLite commits durable off the main thread. With `synchronous=NORMAL` in WAL mode a
 * COMMIT writes its frames to the `-wal` file without an fsync (SQLite still syncs before every
 * checkpoint, so the database itself stays consistent); this module then `fdatasync`s that file
 * on libuv's thread pool, and a writer hears success only after a sync that began after its
 * commit. At most one sync runs at a time; commits that land while one runs share the next.
 * A failed sync fails closed: the page cache's state is unknown (Linux clears the error once
 * reported, so a later sync would "succeed" over lost pages), so every later call refuses.
 */
import fsSync from 'node:fs'
import fs from 'node:fs/promises'
import { EitriError } from '../../errors/eitri-error.ts'

/** Flushes one open file's data to disk (a seam for tests; the default is `datasync`). */
export type Datasync = (handle: fs.FileHandle) => Promise<void>

/** Through the callback API: a trip through the thread pool costs less than `handle.datasync()`. */
const datasyncHandle: Datasync = (handle) =>
  new Promise((resolve, reject) => {
    fsSync.fdatasync(handle.fd, (error) => (error === null ? resolve() : reject(error)))
  })

/** The `fdatasync` pipeline of one connection's write-ahead log. */
export class WalSync {
  readonly #path: string
  readonly #datasync: Datasync
  /** Opened at the first sync: by then SQLite has the log open and has written to it. */
  #handle: Promise<{ handle: fs.FileHandle; ino: number; dev: number }> | undefined
  /** The sync running now, if any. */
  #running: Promise<void> | undefined
  /** The sync that will start when the running one ends, shared by everyone waiting for it. */
  #queued: Promise<void> | undefined
  #failure: EitriError | undefined

  /** `walPath` is the database's path followed by `-wal`, the file SQLite appends commits to. */
  constructor(walPath: string, datasync: Datasync = datasyncHandle) {
    this.#path = walPath
    this.#datasync = datasync
  }

  /** The error every call gets once a sync has failed, else undefined. */
  get failure(): EitriError | undefined {
    return this.#failure
  }

  /**
   * Resolves once an `fdatasync` of the log that began after this call has completed: call it
   * right after a COMMIT returns, and what that commit wrote is on disk when it resolves.
   *
   * @throws EitriError `store_unavailable` when that sync (or an earlier one) failed.
   */
  durable(): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure)
    // A sync already running may have begun before the caller's commit: it cannot count.
    if (this.#running === undefined) return this.#begin()
    this.#queued ??= this.#running.then(
      () => this.#startQueued(),
      () => this.#startQueued(),
    )
    return this.#queued
  }

  #startQueued(): Promise<void> {
    this.#queued = undefined
    // Another caller may have begun one in between; it too began after our callers' commits.
    return this.#running ?? this.#begin()
  }

  #begin(): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure)
    const sync: Promise<void> = this.#syncOnce()
      .catch((error: unknown) => {
        this.#failure ??= this.#failed(error)
        throw this.#failure
      })
      .finally(() => {
        if (this.#running === sync) this.#running = undefined
      })
    this.#running = sync
    return sync
  }

  async #syncOnce(): Promise<void> {
    this.#handle ??= this.#open()
    const held = await this.#handle
    // The file at the path must still be the one SQLite writes: SQLite keeps its log open for
    // the connection's life and only truncates it in place, so a different file there means
    // something outside removed or replaced it, and syncing ours proves nothing about it.
    // (A stat on the thread takes microseconds; another trip through the pool would not.)
    await this.#datasync(held.handle)
    const current = fsSync.statSync(this.#path)
    if (current.ino !== held.ino || current.dev !== held.dev) {
      throw new Error(`${this.#path} was replaced while the store had it open`)
    }
  }

  async #open(): Promise<{ handle: fs.FileHandle; ino: number; dev: number }> {
    const handle = await fs.open(this.#path, 'r')
    try {
      const status = await handle.stat()
      return { handle, ino: status.ino, dev: status.dev }
    } catch (error) {
      await handle.close()
      throw error
    }
  }

  #failed(error: unknown): EitriError {
    return new EitriError(
      'store_unavailable',
      `The store could not make its last writes durable (syncing ${this.#path} failed: ${(error as Error).message}); they may be lost, so it refuses all further work. Check the disk, then start eitri again: SQLite recovers what reached the disk.`,
      { cause: error },
    )
  }

  /** Waits for the syncs asked for so far, then closes the log's handle (never rejects). */
  async close(): Promise<void> {
    await this.#queued?.catch(() => undefined)
    await this.#running?.catch(() => undefined)
    const held = await this.#handle?.catch(() => undefined)
    this.#handle = undefined
    await held?.handle.close()
  }
}
