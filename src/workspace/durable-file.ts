/**
 * @module workspace/durable-file
 * A small file replaced whole and durably without holding the one thread for its syncs: written
 * beside its place, synced, renamed over it, its folder synced, each sync on the thread pool.
 * Writes of different files overlap, and the file system's journal commits syncs that wait
 * together at once: many records cost about one sync, where one by one each cost its own. The
 * steps between the syncs (make the folder, open, write, close, rename) take microseconds and
 * run on the thread: each trip through the thread pool costs a tenth of a millisecond or more
 * of waiting, and a fork's record is on the path of every hire.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

/**
 * What `writeDurably` (merge-journal) does, with the same guarantees: once this resolves the
 * file holds `value` after a power loss; before, it holds its old content or `value`, never
 * nothing or a part.
 */
export async function writeDurablyAsync(file: string, value: unknown): Promise<void> {
  const folder = path.dirname(file)
  fs.mkdirSync(folder, { recursive: true })
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`
  const descriptor = fs.openSync(temporary, 'wx', 0o600)
  try {
    fs.writeFileSync(descriptor, JSON.stringify(value))
    // Its content on disk before its name: a rename that outlives a crash names a whole file.
    await fsyncOnPool(descriptor)
  } catch (error) {
    fs.closeSync(descriptor)
    fs.rmSync(temporary, { force: true })
    throw error
  }
  fs.closeSync(descriptor)
  fs.renameSync(temporary, file)
  const directory = fs.openSync(folder, 'r')
  try {
    // The rename on disk before the caller goes on (a discard then removes the reference).
    await fsyncOnPool(directory)
  } finally {
    fs.closeSync(directory)
  }
}

function fsyncOnPool(descriptor: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.fsync(descriptor, (error) => (error === null ? resolve() : reject(error)))
  })
}
