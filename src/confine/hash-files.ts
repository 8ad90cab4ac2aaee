/**
 * @module confine/hash-files
 * sha256 of files: of a written file, and of every input string that names an existing regular
 * file, so a result records exactly which versions of which files went in and came out.
 */
import { createHash } from 'node:crypto'
import { constants } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'

/** Strings longer than this are not taken for file names. */
const MAX_PATH_LENGTH = 4096
/** Input strings looked at, at most: an input holding a million strings costs no million stats. */
const MAX_INPUT_STRINGS = 1000
/** How deep into nested input objects strings are looked for. */
const MAX_INPUT_DEPTH = 16

/** Options of {@link hashFile}. */
export interface HashFileOptions {
  /** Follow a symbolic link at `path` itself. @default true */
  readonly followSymlinks?: boolean
  readonly signal?: AbortSignal | undefined
}

/**
 * The sha256 (hex) of a regular file's content, or undefined when `path` is missing or is not
 * a regular file. Never opens a pipe or a device (it would block or never end).
 */
export async function hashFile(
  filePath: string,
  options: HashFileOptions = {},
): Promise<string | undefined> {
  const flags =
    constants.O_RDONLY |
    constants.O_NONBLOCK |
    (options.followSymlinks === false ? constants.O_NOFOLLOW : 0)
  let handle: fs.FileHandle
  try {
    handle = await fs.open(filePath, flags)
  } catch {
    return undefined
  }
  try {
    if (!(await handle.stat()).isFile()) return undefined
    const hash = createHash('sha256')
    for await (const chunk of handle.createReadStream({
      autoClose: false,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    })) {
      hash.update(chunk as Buffer)
    }
    return hash.digest('hex')
  } finally {
    await handle.close()
  }
}

/**
 * Hashes every string of `input` (nested objects and arrays included) that names an existing
 * regular file: an absolute path, or a relative one from this process's working folder. Keys
 * are the strings as given. Folders, missing paths and other strings are left out.
 *
 * @example
 * await hashInputFiles({ path: '/srv/data.csv', note: 'hello' }) // { '/srv/data.csv': 'e3b0…' }
 */
export async function hashInputFiles(
  input: unknown,
  options: { readonly signal?: AbortSignal | undefined } = {},
): Promise<Record<string, string>> {
  const hashes: Record<string, string> = {}
  for (const candidate of pathLikeStrings(input)) {
    options.signal?.throwIfAborted()
    const hash = await hashFile(path.resolve(candidate), { signal: options.signal })
    if (hash !== undefined) hashes[candidate] = hash
  }
  return hashes
}

function pathLikeStrings(input: unknown): Set<string> {
  const found = new Set<string>()
  const visit = (value: unknown, depth: number): void => {
    if (found.size >= MAX_INPUT_STRINGS || depth > MAX_INPUT_DEPTH) return
    if (typeof value === 'string') {
      if (value !== '' && value.length <= MAX_PATH_LENGTH && !value.includes('\0')) found.add(value)
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item, depth + 1)
    } else if (typeof value === 'object' && value !== null) {
      for (const item of Object.values(value)) visit(item, depth + 1)
    }
  }
  visit(input, 0)
  return found
}
