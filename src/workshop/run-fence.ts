/**
 * @module workshop/run-fence
 * Which Runs a session that does not see every fork may read (an HTTP connection, an
 * `--isolate` session, and the Runs they hire): those its session hired and their children,
 * found by walking a Run's parents up to the row whose actor is that session. Any other Run
 * reads exactly like one that does not exist, as another owner's fork does (decision 0010):
 * a Run's value, output and journal hold what it read in its world.
 */
import type { RunRecord } from '../store/run-record.ts'
import type { Store, StoreCallOptions } from '../store/store.ts'

/** A chain of parents longer than this is not followed (Runs nest a few levels deep). */
const MAX_PARENTS = 256

/** Whether `run` was hired by the session `actor` or by a Run below one it hired. */
export async function hiredWithin(
  store: Store,
  run: RunRecord,
  actor: string,
  options: StoreCallOptions = {},
): Promise<boolean> {
  let row: RunRecord | undefined = run
  for (let step = 0; row !== undefined && step < MAX_PARENTS; step++) {
    if (row.actor === actor) return true
    if (row.parentId === null) return false
    row = await store.getRun(row.parentId, options)
  }
  return false
}
