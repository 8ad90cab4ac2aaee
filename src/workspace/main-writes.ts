/**
 * @module workspace/main-writes
 * What a journal would write to main, as main's write policy judges writes: a delete, a link
 * with its target, or a file with its mode and size (read from eitri's object store).
 */
import type { ObjectStore } from './git/object-store.ts'
import type { MainWrite } from './line-types.ts'
import type { JournalEntry } from './merge-journal.ts'

/** The writes `entries` would make to main, in order. */
export async function mainWritesOf(
  store: ObjectStore,
  entries: readonly JournalEntry[],
): Promise<MainWrite[]> {
  const writes: MainWrite[] = []
  for (const entry of entries) {
    const after = entry.after
    if (after === undefined) writes.push({ path: entry.path, type: 'delete' })
    else if (after.kind === 'symlink') {
      const target = (await store.require(after.oid)).content.toString('utf8')
      writes.push({ path: entry.path, type: 'symlink', target })
    } else {
      const size = (await store.require(after.oid)).content.byteLength
      const mode = after.kind === 'executable' ? 0o755 : 0o644
      writes.push({ path: entry.path, type: 'file', mode, size })
    }
  }
  return writes
}
