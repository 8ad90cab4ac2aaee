/**
 * @module eval/capabilities/file-reads
 * Reading workspace files within one answer's limits: a file's size is known before it is read,
 * and what its answer will take as JSON (where a control character takes six characters) is
 * known before it is decoded, so an answer too large is refused before it is made, and the
 * bytes it takes are reserved before they are held.
 */
import { EitriError } from '../../errors/eitri-error.ts'
import type { CapabilityScope } from '../capability.ts'
import { MAX_ANSWER_CHARS, MAX_RESULT_BYTES } from '../eval-limits.ts'

/** How to read a file too large for one answer, for the refusal. */
export function readInParts(path: string, size: number): string {
  return `${path} is ${size} bytes, over the ${MAX_RESULT_BYTES} bytes one fs.readFile answers. Read it in parts with fs.readRange(${JSON.stringify(path)}, { offset, length }) (at most ${MAX_RESULT_BYTES} bytes a part; each answer says where the next part starts), or search it with shell.run('grep …').`
}

/** Resolves `path` for reading (links followed) and takes its size (0 for what is no file). */
export async function sizeUp(
  path: string,
  { ctx }: CapabilityScope,
): Promise<{ resolved: string; size: number }> {
  const resolved = await ctx.workspace.resolve(path, 'read')
  const stat = await ctx.workspace.stat(resolved, { signal: ctx.signal })
  return { resolved, size: stat?.type === 'file' ? stat.size : 0 }
}

/** Bytes of an unfinished UTF-8 character at the end of `bytes` (0 to 3). */
export function unfinishedCharacter(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back] as number
    if ((byte & 0xc0) === 0x80) continue
    const needs = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return needs > back ? back : 0
  }
  return 0
}

/** Characters of the JSON string of UTF-8 `bytes` decoded, quotes included. */
export function jsonTextLength(bytes: Uint8Array): number {
  let length = 2
  // An indexed loop: an iterator over megabytes is many times slower.
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index] as number
    if (byte >= 0x80) {
      // One UTF-16 unit per character; a four-byte character takes two.
      if (byte >= 0xc0) length += byte >= 0xf0 ? 2 : 1
    } else if (byte === 0x22 || byte === 0x5c) length += 2
    else if (byte >= 0x20) length += 1
    else
      length +=
        byte === 0x08 || byte === 0x09 || byte === 0x0a || byte === 0x0c || byte === 0x0d ? 2 : 6
  }
  return length
}

/**
 * Decodes `bytes` for the answer, first refusing an answer too large as JSON and reserving
 * what it takes.
 *
 * @throws EitriError `binary_file` for text that is not UTF-8, `limit_exceeded` for an answer
 *   over MAX_ANSWER_CHARS.
 */
export async function answerText(
  bytes: Uint8Array,
  path: string,
  as: 'utf8' | 'base64',
  { bytes: reservation }: CapabilityScope,
): Promise<string> {
  const jsonChars = as === 'base64' ? Math.ceil(bytes.length / 3) * 4 + 2 : jsonTextLength(bytes)
  if (jsonChars > MAX_ANSWER_CHARS) {
    throw new EitriError(
      'limit_exceeded',
      `${path}: these ${bytes.length} bytes would be ${jsonChars} characters as JSON (a control character takes six), over the ${MAX_ANSWER_CHARS} one answer may hold. Read a smaller part with fs.readRange, or read it as base64.`,
    )
  }
  // The bytes read and the answer made of them (more than reserved for escape-heavy text).
  await reservation.reserve(bytes.length + jsonChars)
  if (as === 'base64') return Buffer.from(bytes).toString('base64')
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new EitriError(
      'binary_file',
      `${path} is not UTF-8 text; read it with fs.readFile(path, { encoding: 'base64' }).`,
    )
  }
}
