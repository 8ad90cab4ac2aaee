/**
 * @module eval/capabilities/drive-capability
 * `drive`: the workspace's blob drive: content-addressed files in folders, where writing an
 * existing name keeps the old version. Read-only access refuses every change.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import type { DriveAccess } from '../../ports/drive-access.ts'
import type { ToolContext } from '../../tool/tool-context.ts'
import { capabilityFunction, type Capability, type CapabilityScope } from '../capability.ts'
import { MAX_RESULT_BYTES } from '../eval-limits.ts'

const encoding = z.strictObject({ encoding: z.enum(['utf8', 'base64']).optional() }).optional()

function driveOf(ctx: ToolContext, change?: string): DriveAccess {
  if (ctx.drive === undefined)
    throw new EitriError('not_available', 'This session has no blob drive.')
  if (change !== undefined && ctx.access?.level === 'read-only') {
    throw new EitriError(
      'read_only_access',
      `${change} refused: the access in force is read-only, so the drive cannot change.`,
    )
  }
  return ctx.drive
}

function text(bytes: Uint8Array, as: 'utf8' | 'base64' = 'utf8'): string {
  return Buffer.from(bytes).toString(as)
}

/**
 * Refuses content over the cap by the size the drive recorded, before reading it, and
 * reserves what reading it takes; `read` then reads it (and is checked again, in case the
 * name was written meanwhile).
 */
async function readSized(
  what: string,
  size: number | undefined,
  { bytes }: CapabilityScope,
  read: () => Promise<Uint8Array>,
): Promise<Uint8Array> {
  const tooLarge = (actual: number): EitriError =>
    new EitriError(
      'file_too_large',
      `${what} is ${actual} bytes, over the ${MAX_RESULT_BYTES} bytes one drive read answers. Keep large content in the workspace instead, where fs.readRange reads it in parts.`,
    )
  if (size !== undefined && size > MAX_RESULT_BYTES) throw tooLarge(size)
  await bytes.reserve(size ?? 0)
  const data = await read()
  if (data.byteLength > MAX_RESULT_BYTES) throw tooLarge(data.byteLength)
  return data
}

/** The `drive` capability. */
export const driveCapability: Capability = {
  name: 'drive',
  purpose:
    'Keep files by content in the workspace’s blob drive: the same bytes give the same sha256 id, and every version stays.',
  example:
    "const { id } = await drive.write('reports/today.md', '# Today')\nawait drive.list('reports')",
  functions: [
    capabilityFunction({
      name: 'write',
      signature:
        "write(path: string, content: string, options?: { encoding?: 'utf8' | 'base64' }): Promise<{ path, id, size, when }>",
      description:
        'Stores content under a name; an earlier version of the name stays reachable by id.',
      parameters: z.tuple([z.string().min(1), z.string(), encoding]),
      run: async ([path, content, options], { ctx }) =>
        driveOf(ctx, `drive.write(${JSON.stringify(path)})`).write(
          path,
          Buffer.from(content, options?.encoding ?? 'utf8'),
        ),
    }),
    capabilityFunction({
      name: 'read',
      signature:
        "read(path: string, options?: { version?: string, encoding?: 'utf8' | 'base64' }): Promise<string>",
      description: 'The current content of a name, or of one of its versions by id.',
      parameters: z.tuple([
        z.string().min(1),
        z
          .strictObject({
            version: z.string().optional(),
            encoding: z.enum(['utf8', 'base64']).optional(),
          })
          .optional(),
      ]),
      run: async ([path, options], scope) => {
        const drive = driveOf(scope.ctx)
        const version = options?.version
        const size =
          version === undefined
            ? await drive
                .stat(path)
                .then((file) => (file !== undefined && 'size' in file ? file.size : undefined))
            : (await drive.versions(path)).find((candidate) => candidate.id === version)?.size
        const data = await readSized(path, size, scope, () =>
          drive.read(path, version === undefined ? {} : { version }),
        )
        return text(data, options?.encoding)
      },
    }),
    capabilityFunction({
      name: 'get',
      signature: "get(id: string, options?: { encoding?: 'utf8' | 'base64' }): Promise<string>",
      description: 'Content by its sha256 id, whatever name it had.',
      parameters: z.tuple([z.string().min(1), encoding]),
      run: async ([id, options], scope) => {
        const drive = driveOf(scope.ctx)
        const size = (await drive.find(id))?.size
        return text(await readSized(id, size, scope, () => drive.get(id)), options?.encoding)
      },
    }),
    capabilityFunction({
      name: 'list',
      signature:
        'list(folder?: string): Promise<({ type: "folder", name } | { type: "file", name, path, id, size, when })[]>',
      description: 'A folder’s entries: folders first, then files, each by name.',
      parameters: z.tuple([z.string().optional()]),
      run: async ([folder = ''], { ctx }) => driveOf(ctx).list(folder),
    }),
    capabilityFunction({
      name: 'versions',
      signature: 'versions(path: string): Promise<{ path, id, size, when }[]>',
      description: 'Every version a name had, oldest first.',
      parameters: z.tuple([z.string().min(1)]),
      run: async ([path], { ctx }) => driveOf(ctx).versions(path),
    }),
    capabilityFunction({
      name: 'mkdir',
      signature: 'mkdir(path: string): Promise<void>',
      description: 'Creates a folder (and its parents).',
      parameters: z.tuple([z.string().min(1)]),
      run: async ([path], { ctx }) =>
        driveOf(ctx, `drive.mkdir(${JSON.stringify(path)})`).makeFolder(path),
    }),
    capabilityFunction({
      name: 'remove',
      signature: 'remove(path: string): Promise<void>',
      description:
        'Removes a file (its versions stay reachable by id) or an empty folder; a folder that holds anything is refused.',
      parameters: z.tuple([z.string().min(1)]),
      run: async ([path], { ctx }) =>
        driveOf(ctx, `drive.remove(${JSON.stringify(path)})`).remove(path),
    }),
  ],
}
