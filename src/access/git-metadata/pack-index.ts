/**
 * @module access/git-metadata/pack-index
 * The object ids a pack index lists (versions 1 and 2), for an index git has already verified
 * against its pack: refs may then point at the objects of a pack that comes back in the same
 * change.
 */
import { OBJECT_ID_HEX_LENGTH, type ObjectFormat } from '../../workspace/git/object-format.ts'

/** The `\377tOc` magic of a version 2 index. */
const MAGIC_V2 = 0xff744f63
/** 256 four-byte counts: how many ids start with a byte up to each value. */
const FANOUT_BYTES = 256 * 4

/** The ids `index` lists; none when it is too short to be an index. */
export function packIndexIds(index: Uint8Array, format: ObjectFormat): string[] {
  const bytes = Buffer.from(index.buffer, index.byteOffset, index.byteLength)
  const idBytes = OBJECT_ID_HEX_LENGTH[format] / 2
  const version2 = bytes.byteLength >= 8 && bytes.readUInt32BE(0) === MAGIC_V2
  const fanout = version2 ? 8 : 0
  if (bytes.byteLength < fanout + FANOUT_BYTES) return []
  const count = bytes.readUInt32BE(fanout + FANOUT_BYTES - 4)
  // Version 2: the ids in one table; version 1: a four-byte offset before each id.
  const first = fanout + FANOUT_BYTES
  const stride = version2 ? idBytes : 4 + idBytes
  const skip = version2 ? 0 : 4
  if (bytes.byteLength < first + count * stride) return []
  const ids: string[] = []
  for (let entry = 0; entry < count; entry++) {
    const start = first + entry * stride + skip
    ids.push(bytes.subarray(start, start + idBytes).toString('hex'))
  }
  return ids
}
