/**
 * @module workshop/isolated-drive
 * The blob drive as an isolated session sees it (`eitri serve --isolate`, a principal other
 * than the person). The drive belongs to the workspace, like main: every connection of every
 * server on the workspace reads it, and the jail shows it at `/drive`. So it is reached as main
 * is from such a session: read freely, changed only with a person's yes. Written freely, it
 * let one connection hand another whatever it liked and read back what the other kept there
 * (decision 0052): a drive file is another connection's as soon as it is written.
 */
import { createHash } from 'node:crypto'
import { EitriError } from '../errors/eitri-error.ts'
import type { AccessContext } from '../ports/access-context.ts'
import type { DriveAccess } from '../ports/drive-access.ts'
import { driveReads } from './run-drive.ts'

/** Why the person is asked, as every drive change of an isolated session words it. */
const REASON =
  'this session is isolated on a fork; the drive is the workspace’s, like main, and every other connection reads what it holds'

/**
 * `drive` whose changes ask the person through `access`'s approver (read when the change is
 * made); reads pass. `signal` is the call's.
 */
export function isolatedDrive(
  drive: DriveAccess,
  access: () => AccessContext,
  signal: AbortSignal,
): DriveAccess {
  const ask = async (input: Record<string, unknown>, summary: string): Promise<void> => {
    const approve = access().approve
    const answer =
      approve === undefined
        ? { type: 'unavailable' as const, reason: 'no person can be asked in this session' }
        : await approve({ tool: 'drive', input, reason: REASON, summary, signal })
    if (answer.type === 'approved') return
    throw new EitriError(
      'permission_denied',
      `${String(input['operation'])} refused: the drive is the workspace’s, like main, and this session is isolated on a fork, so only a person may change it (${answer.reason.replace(/\.$/, '')}). Keep the file in your fork instead (write_file).`,
    )
  }
  return {
    write: async (path, data) => {
      const id = `sha256:${createHash('sha256').update(data).digest('hex')}`
      await ask(
        { operation: 'drive.write', path, id, size: data.byteLength },
        `write ${path} (${data.byteLength} bytes, ${id}) into the workspace’s drive`,
      )
      return drive.write(path, data)
    },
    makeFolder: async (path) => {
      await ask(
        { operation: 'drive.mkdir', path },
        `make the folder ${path} in the workspace’s drive`,
      )
      return drive.makeFolder(path)
    },
    remove: async (path) => {
      const held = await drive.stat(path)
      await ask(
        {
          operation: 'drive.remove',
          path,
          ...(held !== undefined && 'id' in held ? { id: held.id } : {}),
        },
        `remove ${path} from the workspace’s drive`,
      )
      return drive.remove(path)
    },
    ...driveReads(drive),
  }
}
