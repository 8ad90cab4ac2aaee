/**
 * @module access/git-metadata/git-ref-format
 * Refs read the way git reads them, and only what git writes accepted: a ref name that passes
 * git's name rules, a loose ref holding an object id and a newline or `ref: refs/…`, and a
 * `packed-refs` file of `<id> <name>` lines (with the repository's id length), optional `^<id>`
 * peel lines and an optional `# pack-refs with: …` header whose `sorted` trait git trusts for
 * its binary search. Anything else is refused rather than read leniently: a name with a
 * trailing space, or a line out of order, is a ref git no longer finds.
 */
import { OBJECT_ID_HEX_LENGTH, type ObjectFormat } from '../../workspace/git/object-format.ts'

/** What a ref holds: an object id, or the name of another ref. */
export type RefValue =
  | { readonly type: 'object'; readonly id: string }
  | { readonly type: 'symbolic'; readonly target: string }

/** One record of a packed-refs file. */
export interface PackedRef {
  readonly id: string
  /** The `^<id>` line after it: what an annotated tag points to. */
  readonly peeled?: string
}

/** A packed-refs file as git reads it, or why git would not read it so. */
export type PackedRefsParse =
  | { readonly type: 'refs'; readonly refs: ReadonlyMap<string, PackedRef> }
  | { readonly type: 'invalid'; readonly reason: string }

/** Characters git never allows in a ref name besides controls and space: `~^:?*[\`. */
const FORBIDDEN_IN_NAME = /[~^:?*[\\]/

/** Whether `name` holds a control character, a space or DEL. */
function hasControl(name: string): boolean {
  for (let index = 0; index < name.length; index++) {
    const code = name.charCodeAt(index)
    if (code <= 0x20 || code === 0x7f) return true
  }
  return false
}

/**
 * Whether git accepts `name` as a ref name (`git check-ref-format --allow-onelevel`): no
 * component empty, starting with `.` or ending with `.lock`; no `..`, `@{`, control
 * characters, space or `~^:?*[\`; not `@`; not ending with `/` or `.`.
 */
export function isRefName(name: string): boolean {
  if (name === '' || name === '@' || name.endsWith('.')) return false
  if (hasControl(name) || FORBIDDEN_IN_NAME.test(name)) return false
  if (name.includes('..') || name.includes('@{')) return false
  return name
    .split('/')
    .every(
      (component) => component !== '' && !component.startsWith('.') && !component.endsWith('.lock'),
    )
}

/** Whether `name` is a ref git lists (`refs/…`, a valid name). */
export function isListedRefName(name: string): boolean {
  return name.startsWith('refs/') && isRefName(name)
}

/** Whether `text` is an object id of `format` as git writes them (lower-case hex). */
export function isObjectId(text: string, format: ObjectFormat): boolean {
  return text.length === OBJECT_ID_HEX_LENGTH[format] && /^[0-9a-f]+$/.test(text)
}

/**
 * A loose ref's content as git writes it (the same for `HEAD`): `<id>\n`, or `ref: refs/…\n`
 * for a symbolic ref. Undefined when git would not read it as a ref.
 */
export function parseLooseRef(content: Uint8Array, format: ObjectFormat): RefValue | undefined {
  const text = Buffer.from(content).toString('latin1')
  if (!text.endsWith('\n')) return undefined
  const body = text.slice(0, -1)
  if (isObjectId(body, format)) return { type: 'object', id: body }
  if (!body.startsWith('ref: ')) return undefined
  const target = utf8Name(body.slice('ref: '.length))
  return target !== undefined && isListedRefName(target) ? { type: 'symbolic', target } : undefined
}

/**
 * Parses a packed-refs file strictly. Empty is no refs. Otherwise every line ends with a
 * newline; only the first may be the `# pack-refs with:` header; each record is
 * `<id> <refs/name>`, optionally followed by one `^<id>` line; a name appears once; and under
 * a `sorted` header the names must ascend byte by byte (git finds refs by binary search then).
 */
export function parsePackedRefs(content: Uint8Array, format: ObjectFormat): PackedRefsParse {
  const refs = new Map<string, PackedRef>()
  if (content.byteLength === 0) return { type: 'refs', refs }
  const text = Buffer.from(content).toString('latin1')
  if (!text.endsWith('\n')) return invalid('its last line does not end with a newline')
  const lines = text.slice(0, -1).split('\n')
  const length = OBJECT_ID_HEX_LENGTH[format]
  let sorted = false
  let start = 0
  if (lines[0]?.startsWith('#') === true) {
    const header = lines[0]
    if (!header.startsWith('# pack-refs with:'))
      return invalid('its first line is a comment other than "# pack-refs with: …"')
    sorted = header.slice('# pack-refs with:'.length).split(' ').includes('sorted')
    start = 1
  }
  let previous: { name: string; raw: string } | undefined
  for (let index = start; index < lines.length; index++) {
    const line = lines[index] as string
    const at = `line ${index + 1}`
    if (line.startsWith('^')) {
      const peeled = line.slice(1)
      if (previous === undefined || !isObjectId(peeled, format))
        return invalid(`${at} is not a peel line (^ and a ${length}-digit id) after a ref`)
      const record = refs.get(previous.name) as PackedRef
      if (record.peeled !== undefined) return invalid(`${at} is a second peel line`)
      refs.set(previous.name, { ...record, peeled })
      continue
    }
    const id = line.slice(0, length)
    const raw = line.slice(length + 1)
    const name = utf8Name(raw)
    if (!isObjectId(id, format) || line[length] !== ' ' || name === undefined)
      return invalid(`${at} is not "<${length}-digit id> <name>"`)
    if (!isListedRefName(name))
      return invalid(`${at} names ${JSON.stringify(name)}, which git does not accept as a ref`)
    if (refs.has(name)) return invalid(`${at} names ${name} a second time`)
    if (sorted && previous !== undefined && !(previous.raw < raw))
      return invalid(`${at} (${name}) is out of order under the "sorted" header`)
    refs.set(name, { id })
    previous = { name, raw }
  }
  return { type: 'refs', refs }
}

function invalid(why: string): PackedRefsParse {
  return { type: 'invalid', reason: `git would not read it: ${why}` }
}

/** A name read as bytes (latin1), as UTF-8; undefined when the bytes are not UTF-8. */
function utf8Name(raw: string): string | undefined {
  const bytes = Buffer.from(raw, 'latin1')
  const name = bytes.toString('utf8')
  return Buffer.from(name, 'utf8').equals(bytes) ? name : undefined
}
