/**
 * @module access/host-write
 * A write outside the workspace, made only at full access after a person approved it: atomic
 * (a temporary file beside it, then a rename), never following a final link.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { EitriError } from '../errors/eitri-error.ts'
import { contentBytes } from '../tool/file-content.ts'
import type { FileContent, WriteReceipt } from '../ports/workspace-view.ts'

/** Writes `data` to the absolute host path `target`, creating folders. */
export async function writeOutsideWorkspace(
  target: string,
  data: FileContent,
): Promise<WriteReceipt> {
  if (!path.isAbsolute(target)) {
    throw new EitriError(
      'invalid_input',
      `A write outside the workspace needs an absolute path (got ${target}).`,
    )
  }
  const bytes = contentBytes(data)
  await fs.mkdir(path.dirname(target), { recursive: true })
  const existing = await fs.lstat(target).catch(() => undefined)
  if (existing?.isDirectory() === true)
    throw new EitriError('is_directory', `Path is a directory, not a file: ${target}`)
  const temporary = path.join(
    path.dirname(target),
    `.${path.basename(target)}.eitri-${randomBytes(6).toString('hex')}.tmp`,
  )
  await fs.writeFile(temporary, bytes, {
    flag: 'wx',
    mode: existing?.isFile() === true ? existing.mode & 0o777 : 0o644,
  })
  try {
    await fs.rename(temporary, target)
  } catch (error) {
    await fs.rm(temporary, { force: true })
    throw error
  }
  return { path: target, bytes: bytes.byteLength, created: existing === undefined }
}
