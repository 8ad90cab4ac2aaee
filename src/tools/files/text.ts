/**
 * @module tools/files/text
 * Text decoding shared by the file tools: binary files are refused, not garbled.
 */
import { EitriError } from '../../errors/eitri-error.ts'

/** How many leading bytes are searched for a NUL, as git does to call a file binary. */
const BINARY_SNIFF_BYTES = 8000

/** True when the first bytes hold a NUL. */
export function looksBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.byteLength, BINARY_SNIFF_BYTES)
  for (let index = 0; index < end; index++) if (bytes[index] === 0) return true
  return false
}

// ignoreBOM keeps a byte order mark in the text, so the text is the file's, and an edit keeps it.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true })

/**
 * Decodes a file's bytes as UTF-8 text.
 *
 * @throws EitriError `binary_file` when the file looks binary.
 */
export function decodeText(bytes: Uint8Array, path: string): string {
  if (looksBinary(bytes)) {
    throw new EitriError(
      'binary_file',
      `File is binary (${bytes.byteLength} bytes): ${path}. The file tools read and edit text only.`,
      { data: { path, size: bytes.byteLength } },
    )
  }
  return decoder.decode(bytes)
}
