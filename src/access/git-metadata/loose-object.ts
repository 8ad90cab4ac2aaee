/**
 * @module access/git-metadata/loose-object
 * Whether a loose object is what its name claims: git finds an object by its id alone and
 * trusts the file it finds, so a file named after one object holding another (an id the person
 * will fetch later, say) would be believed from then on. The file must inflate, exactly, to
 * `<type> <size>\0<content>` whose hash is the id in its path.
 */
import { createHash } from 'node:crypto'
import { createInflate } from 'node:zlib'
import type { ObjectFormat } from '../../workspace/git/object-format.ts'

/** Inflated bytes one judgement may still spend on checking objects (shared, decremented). */
export interface InflateBudget {
  remaining: number
}

/** A loose object header: a type, a size without leading zeros, a NUL. */
const HEADER = /^(blob|tree|commit|tag) (0|[1-9][0-9]{0,15})\0$/
/** A header is a type, a space, at most 16 digits and a NUL. */
const MAX_HEADER_BYTES = 32

/**
 * Why the loose object `compressed` is not the object `id` of `format`, or undefined when it
 * is. Inflated a piece at a time, never whole in memory, and never past the size the header
 * declares or past `budget`.
 */
export function looseObjectProblem(
  compressed: Uint8Array,
  id: string,
  format: ObjectFormat,
  budget: InflateBudget,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const inflate = createInflate()
    const hash = createHash(format)
    let header = Buffer.alloc(0)
    let declared: number | undefined
    let contentBytes = 0
    let settled = false
    const finish = (problem: string | undefined): void => {
      if (settled) return
      settled = true
      if (problem !== undefined) inflate.destroy()
      resolve(problem)
    }
    inflate.on('data', (chunk: Buffer) => {
      let rest = chunk
      if (declared === undefined) {
        header = Buffer.concat([header, chunk])
        const end = header.indexOf(0)
        if (end === -1) {
          if (header.byteLength > MAX_HEADER_BYTES)
            finish('it does not start with an object header')
          return
        }
        const match = HEADER.exec(header.subarray(0, end + 1).toString('latin1'))
        if (match === null) return finish('it does not start with an object header')
        declared = Number(match[2])
        if (declared > budget.remaining)
          return finish('it is too large to check together with the other objects of this change')
        budget.remaining -= declared
        hash.update(header.subarray(0, end + 1))
        rest = header.subarray(end + 1)
      }
      contentBytes += rest.byteLength
      if (contentBytes > declared) return finish('it holds more than its header declares')
      hash.update(rest)
    })
    inflate.once('error', () => finish('it is not zlib-compressed data'))
    inflate.once('end', () => {
      if (declared === undefined) return finish('it does not start with an object header')
      if (contentBytes !== declared) return finish('it holds less than its header declares')
      // Bytes after the compressed stream: git refuses such a file ("garbage at end").
      if (inflate.bytesWritten !== compressed.byteLength)
        return finish('it has bytes after its compressed data')
      const actual = hash.digest('hex')
      finish(actual === id ? undefined : `its content is object ${actual}, not ${id}`)
    })
    inflate.end(compressed)
  })
}
