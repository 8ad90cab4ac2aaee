/**
 * @module workshop/materialized-drive
 * The blob drive as a folder programs can read at /drive: a copy kept in step with the drive,
 * readable by the jail's user.
 */
import fs from 'node:fs'
import type { BlobDrive } from '../workspace/blob-drive.ts'
import { ownedPrefix } from '../util/owned-folders.ts'

/** A folder holding the drive's current files, refreshed after every change. */
export async function materializedDrive(
  drive: BlobDrive,
): Promise<{ folder: string; close(): void }> {
  const folder = fs.mkdtempSync(ownedPrefix('drive'))
  fs.chmodSync(folder, 0o755)
  let refreshing: Promise<void> = drive.materialize(folder)
  await refreshing
  const stop = drive.onChange(() => {
    refreshing = refreshing.then(() => drive.materialize(folder)).catch(() => undefined)
  })
  return {
    folder,
    close() {
      stop()
      fs.rmSync(folder, { recursive: true, force: true })
    },
  }
}
