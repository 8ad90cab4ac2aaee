/**
 * @module tool/file-content
 * Helpers over what a file write takes ({@link FileContent}): its length, and its bytes when a
 * caller must hold them (a fork's tree stores whole objects).
 */
import type { ContentSource, FileContent } from '../ports/workspace-view.ts'

/** Bytes read from a source at a time. */
export const CONTENT_CHUNK_BYTES = 1024 * 1024

/** Whether `data` is content read in pieces. */
export function isContentSource(data: FileContent): data is ContentSource {
  return typeof data === 'object' && !(data instanceof Uint8Array)
}

/** The length of `data` in bytes. */
export function contentLength(data: FileContent): number {
  if (typeof data === 'string') return Buffer.byteLength(data, 'utf8')
  return isContentSource(data) ? data.size : data.byteLength
}

/**
 * The bytes of `data`, read whole. A source that ends early gives what it had; one that grew
 * gives its announced size only.
 */
export function contentBytes(data: FileContent): Uint8Array {
  if (typeof data === 'string') return Buffer.from(data, 'utf8')
  if (!isContentSource(data)) return data
  const buffer = Buffer.alloc(data.size)
  let filled = 0
  while (filled < data.size) {
    const read = data.read(
      buffer.subarray(filled, Math.min(filled + CONTENT_CHUNK_BYTES, data.size)),
      filled,
    )
    if (read === 0) break
    filled += read
  }
  return buffer.subarray(0, filled)
}
