/**
 * @module workshop/run-drive
 * The blob drive as a Run's tool calls see it: readable, never changed. The drive belongs to
 * the workspace, like main, and every session and jail shares it; a Run changes only its own
 * world, which its settlement merges, keeps for review or discards. A Run that wrote the drive
 * would leave what no settlement covers: its changes would stay when it is discarded, and
 * reach every other agent without a person's yes (decision 0050).
 */
import { EitriError } from '../errors/eitri-error.ts'
import type { DriveAccess } from '../ports/drive-access.ts'

/** `drive` with every change refused, naming the Run and what to do instead. */
export function runDrive(drive: DriveAccess, runId: string): DriveAccess {
  const refuse = (what: string): never => {
    throw new EitriError(
      'permission_denied',
      `${what} refused: Run ${runId} reads the drive but does not change it (the drive is the workspace's, like main, and a Run changes only its own world). Write the file in your world instead; it is settled with the Run.`,
    )
  }
  return {
    write: async () => refuse('drive.write'),
    makeFolder: async () => refuse('drive.mkdir'),
    remove: async () => refuse('drive.remove'),
    ...driveReads(drive),
  }
}

/** The reading half of `drive`, as every narrowed drive passes it on. */
export function driveReads(
  drive: DriveAccess,
): Pick<DriveAccess, 'read' | 'get' | 'find' | 'list' | 'versions' | 'stat'> {
  return {
    read: (path, options) => drive.read(path, options),
    get: (id) => drive.get(id),
    find: (id) => drive.find(id),
    list: (folder) => drive.list(folder),
    versions: (path) => drive.versions(path),
    stat: (path) => drive.stat(path),
  }
}
