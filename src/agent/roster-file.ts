/**
 * @module agent/roster-file
 * Reading and writing a roster file's text. A read is bounded (a roster is a few kilobytes; a
 * huge file is a mistake, not a roster); a write is atomic (a temporary file beside the target,
 * flushed, then renamed over it), so a crash leaves the old roster or the new one, never half.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { EitriError } from '../errors/eitri-error.ts'

/** The largest roster file read, in bytes. */
export const MAX_ROSTER_FILE_BYTES = 8 * 1024 * 1024

const READ_CHUNK_BYTES = 64 * 1024

/**
 * The text of the roster file `file`.
 *
 * @throws EitriError `not_found` when there is no such file, `invalid_input` when it is a
 * folder or larger than {@link MAX_ROSTER_FILE_BYTES}.
 */
export async function readRosterText(
  file: string,
  options: { readonly signal?: AbortSignal } = {},
): Promise<string> {
  let handle: fs.FileHandle
  try {
    handle = await fs.open(file, 'r')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') {
      throw new EitriError(
        'not_found',
        `Roster file not found: ${file}. Check the path, or save a roster there first.`,
        { data: { file } },
      )
    }
    throw error
  }
  try {
    const stat = await handle.stat()
    if (!stat.isFile()) {
      throw new EitriError('invalid_input', `Roster file ${file} is not a file.`, {
        data: { file },
      })
    }
    if (stat.size > MAX_ROSTER_FILE_BYTES) {
      throw new EitriError(
        'invalid_input',
        `Roster file ${file} is ${stat.size} bytes, over the ${MAX_ROSTER_FILE_BYTES} a roster may have; keep long prompts and data out of it.`,
        { data: { file } },
      )
    }
    // Read in chunks and count, so a file that grew after the stat is still caught.
    const chunks: Buffer[] = []
    let length = 0
    for (;;) {
      options.signal?.throwIfAborted()
      const chunk = Buffer.alloc(READ_CHUNK_BYTES)
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null)
      if (bytesRead === 0) break
      chunks.push(chunk.subarray(0, bytesRead))
      length += bytesRead
      if (length > MAX_ROSTER_FILE_BYTES) {
        throw new EitriError(
          'invalid_input',
          `Roster file ${file} is over the ${MAX_ROSTER_FILE_BYTES} bytes a roster may have.`,
          { data: { file } },
        )
      }
    }
    return Buffer.concat(chunks, length).toString('utf8')
  } finally {
    await handle.close()
  }
}

/** Writes `text` to `file` atomically, creating its folder. */
export async function writeRosterText(
  file: string,
  text: string,
  options: { readonly signal?: AbortSignal } = {},
): Promise<void> {
  options.signal?.throwIfAborted()
  await fs.mkdir(path.dirname(file), { recursive: true })
  const temporary = path.join(
    path.dirname(file),
    `.${path.basename(file)}.eitri-${randomBytes(6).toString('hex')}.tmp`,
  )
  try {
    const handle = await fs.open(temporary, 'wx', 0o644)
    try {
      await handle.writeFile(text)
      // Flushed before the rename, so the name never points at a file still in the cache only.
      await handle.datasync()
    } finally {
      await handle.close()
    }
    options.signal?.throwIfAborted()
    await fs.rename(temporary, file)
  } catch (error) {
    await fs.rm(temporary, { force: true })
    throw error
  }
}
