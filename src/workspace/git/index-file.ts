/**
 * @module workspace/git/index-file
 * The bytes of a git index (`.git/index`), read the way git reads them: a header, the entries
 * (version 2, 3 or 4, whose names are prefix-compressed), then extensions and a checksum of
 * everything before it. Only what judging an index needs: each entry's path, stage, mode and
 * object id, and the extensions by signature; and the same index without its extensions.
 */
import { createHash } from 'node:crypto'
import type { ObjectFormat } from './object-format.ts'

/** One entry of an index. */
export interface IndexEntry {
  /** Relative to the work tree, `/`-separated, as git stores it (bytes read as latin1). */
  readonly path: string
  /** 0 for a merged entry, 1–3 for the sides of a conflict. */
  readonly stage: number
  /** The mode, as git prints it (`100644`, `120000`, `160000`…). */
  readonly mode: string
  readonly id: string
}

/** An index read, or why it is not one git reads. */
export type ParsedIndex =
  | {
      readonly ok: true
      readonly version: number
      readonly entries: readonly IndexEntry[]
      /** Where the entries end (and the extensions begin). */
      readonly entriesEnd: number
      /** The extensions' signatures, in order (`TREE`, `UNTR`, `link`…). */
      readonly extensions: readonly string[]
    }
  | { readonly ok: false; readonly reason: string }

const HASH_BYTES: Readonly<Record<ObjectFormat, number>> = { sha1: 20, sha256: 32 }
const HEADER_BYTES = 12
/** ctime, mtime, dev, ino, mode, uid, gid, size: ten 32-bit fields before the object id. */
const STAT_BYTES = 40
const NAME_MASK = 0x0fff
const EXTENDED_FLAG = 0x4000

/**
 * Reads `bytes` as an index of `format`, at most `maxEntries` entries. The checksum must hold
 * (or be all zeros, which newer git writes with `index.skipHash`), as git checks it.
 *
 * @example
 * const index = parseIndex(fs.readFileSync('.git/index'), 'sha1')
 * if (index.ok) for (const entry of index.entries) console.log(entry.path)
 */
export function parseIndex(
  bytes: Uint8Array,
  format: ObjectFormat,
  maxEntries: number,
): ParsedIndex {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const hashBytes = HASH_BYTES[format]
  const fail = (reason: string): ParsedIndex => ({ ok: false, reason })
  if (data.byteLength < HEADER_BYTES + hashBytes || data.toString('latin1', 0, 4) !== 'DIRC') {
    return fail('it is not a git index (no "DIRC" header)')
  }
  const version = data.readUInt32BE(4)
  if (version < 2 || version > 4)
    return fail(`it is an index of version ${version}, which git does not write`)
  const count = data.readUInt32BE(8)
  if (count > maxEntries) {
    return fail(`it holds ${count} entries, more than the ${maxEntries} judged at once`)
  }
  const end = data.byteLength - hashBytes
  const stored = data.subarray(end)
  if (!stored.every((byte) => byte === 0)) {
    const actual = createHash(format).update(data.subarray(0, end)).digest()
    if (!actual.equals(stored)) return fail('its checksum is wrong, so git would not read it')
  }
  const entries: IndexEntry[] = []
  let offset = HEADER_BYTES
  let previous: Buffer = Buffer.alloc(0)
  const fixed = STAT_BYTES + hashBytes + 2
  for (let index = 0; index < count; index++) {
    if (offset + fixed > end) return fail('its entries run past its end')
    const mode = data.readUInt32BE(offset + 24)
    const id = data.toString('hex', offset + STAT_BYTES, offset + STAT_BYTES + hashBytes)
    const flags = data.readUInt16BE(offset + STAT_BYTES + hashBytes)
    let cursor = offset + fixed
    if ((flags & EXTENDED_FLAG) !== 0) {
      if (version < 3) return fail('an entry has extended flags, which version 2 does not allow')
      cursor += 2
    }
    let length = flags & NAME_MASK
    let name: Buffer
    if (version === 4) {
      // A varint of bytes to drop from the previous name, then the rest, NUL-terminated.
      const varint = readVarint(data, cursor, end)
      if (varint === undefined) return fail('an entry name is cut off')
      cursor = varint.next
      if (varint.value > previous.byteLength)
        return fail('an entry name strips more than there was')
      const kept = previous.subarray(0, previous.byteLength - varint.value)
      const terminator = data.indexOf(0, cursor)
      if (terminator === -1 || terminator >= end) return fail('an entry name is cut off')
      if (length === NAME_MASK) length = kept.byteLength + (terminator - cursor)
      const suffix = length - kept.byteLength
      if (suffix < 0 || cursor + suffix >= end) return fail('an entry name is cut off')
      name = Buffer.concat([kept, data.subarray(cursor, cursor + suffix)])
      offset = cursor + suffix + 1
    } else {
      if (length === NAME_MASK) {
        const terminator = data.indexOf(0, cursor)
        if (terminator === -1 || terminator >= end) return fail('an entry name is cut off')
        length = terminator - cursor
      }
      if (cursor + length >= end) return fail('an entry name is cut off')
      name = data.subarray(cursor, cursor + length)
      // Padded with 1 to 8 NULs to a multiple of eight bytes, counted from the entry's start.
      offset += (cursor - offset + length + 8) & ~7
    }
    previous = name
    entries.push({
      path: name.toString('latin1'),
      stage: (flags >> 12) & 0x3,
      mode: mode.toString(8).padStart(6, '0'),
      id,
    })
  }
  if (offset > end) return fail('its entries run past its end')
  const entriesEnd = offset
  const extensions: string[] = []
  // As git reads them: while a whole extension header fits before the checksum.
  while (offset + 8 <= end) {
    const signature = data.toString('latin1', offset, offset + 4)
    const size = data.readUInt32BE(offset + 4)
    if (offset + 8 + size > end)
      return fail(`its ${JSON.stringify(signature)} extension runs past its end`)
    extensions.push(signature)
    offset += 8 + size
  }
  return { ok: true, version, entries, entriesEnd, extensions }
}

/**
 * The same index with no extensions: the header and entries byte for byte, then a new
 * checksum. Every extension git reads is optional but two (`link`, `sdir`), which the caller
 * must refuse rather than drop; git rebuilds the others (cache tree, untracked cache…).
 */
export function indexWithoutExtensions(
  bytes: Uint8Array,
  parsed: Extract<ParsedIndex, { ok: true }>,
  format: ObjectFormat,
): Buffer {
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, parsed.entriesEnd)
  return Buffer.concat([body, createHash(format).update(body).digest()])
}

/** git's varint of the index (each continuation adds one before shifting). */
function readVarint(
  data: Buffer,
  start: number,
  end: number,
): { value: number; next: number } | undefined {
  let cursor = start
  let byte = data[cursor++]
  if (byte === undefined || cursor > end) return undefined
  let value = byte & 0x7f
  while ((byte & 0x80) !== 0) {
    byte = data[cursor++]
    if (byte === undefined || cursor > end || value > 0xffffff) return undefined
    value = ((value + 1) << 7) + (byte & 0x7f)
  }
  return { value, next: cursor }
}
