/**
 * @module workspace/durable-file
 * A small file replaced whole and durably without holding the one thread: written beside its
 * place, synced, renamed over it, its folder synced, each sync on the thread pool. Writes of
 * different files overlap, and the file system's journal commits syncs that wait together at
 * once: many records cost about one sync, where one by one each cost its own.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'

/**
 * What `writeDurably` (merge-journal) does, with the same guarantees: once this resolves the
 * file holds `value` after a power loss; before, it holds its old content or `value`, never
 * nothing or a part.
 */
export async function writeDurablyAsync(file: string, value: unknown): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true })
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`
  const handle = await fs.open(temporary, 'wx', 0o600)
  try {
    await handle.writeFile(JSON.stringify(value))
    // Its content on disk before its name: a rename that outlives a crash names a whole file.
    await handle.sync()
  } catch (error) {
    await handle.close()
    await fs.rm(temporary, { force: true })
    throw error
  }
  await handle.close()
  await fs.rename(temporary, file)
  const folder = await fs.open(path.dirname(file), 'r')
  try {
    // The rename on disk before the caller goes on (a discard then removes the reference).
    await folder.sync()
  } finally {
    await folder.close()
  }
}
