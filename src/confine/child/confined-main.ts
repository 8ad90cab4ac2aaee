/**
 * @module confine/child/confined-main
 * The child runner of the process and jail executors: reads a {@link ConfinedRequest} as JSON
 * on stdin, imports the module, calls the export with the input and a {@link ConfinedCall},
 * writes the envelope line on stdout after the call's marker, and exits (whatever timers or
 * handles the function left behind). Run with the parent's own Node, which strips types, so
 * `.ts` modules load as they are.
 */
import { readFileSync } from 'node:fs'
import { callExport, loadExport } from './call-target.ts'
import type { ConfinedCall } from '../confined-function.ts'
import { envelopeLine, type ConfinedRequest, type Envelope } from './confined-protocol.ts'

type Write = (chunk: string | Uint8Array, ...rest: unknown[]) => boolean

const request = JSON.parse(readFileSync(0, 'utf8')) as ConfinedRequest
const write = capOutput(request.maxOutputBytes)
const call: ConfinedCall = {
  workdir: request.workdir,
  // The parent kills this process at the deadline; nothing here ever aborts.
  signal: new AbortController().signal,
  // Out of process, writes are found by comparing the scratch folder before and after.
  reportWrite: () => undefined,
}
let envelope: Envelope
try {
  const exported = await loadExport(request.module, request.export)
  envelope = { result: await callExport(exported, request.input, call) }
} catch (error) {
  envelope = { error: error instanceof Error ? error.message : String(error) }
}
let line: string
try {
  line = envelopeLine(request.marker, envelope)
} catch (error) {
  line = envelopeLine(request.marker, {
    error: `the result cannot be sent back as JSON: ${error instanceof Error ? error.message : String(error)}`,
  })
}
await new Promise<void>((resolve) => write(line, () => resolve()))
process.exit('error' in envelope ? 1 : 0)

/**
 * Forwards at most `limit` bytes of what this process prints through `process.stdout`, so a
 * chatty function cannot push its own result out of a bounded capture; answers the original
 * `write`, kept for the envelope.
 */
function capOutput(limit: number): Write {
  const original = process.stdout.write.bind(process.stdout) as Write
  let room = limit
  let dropped = 0
  const capped: Write = (chunk, ...rest) => {
    const encoding = typeof rest[0] === 'string' ? (rest[0] as BufferEncoding) : 'utf8'
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : Buffer.from(chunk)
    const callback = rest.find((item) => typeof item === 'function') as (() => void) | undefined
    const kept = bytes.subarray(0, Math.max(room, 0))
    room -= kept.length
    if (kept.length < bytes.length) {
      if (dropped === 0) original(`\n[... output beyond ${limit} bytes dropped]\n`)
      dropped += bytes.length - kept.length
    }
    if (kept.length > 0) return original(kept, callback)
    if (callback !== undefined) queueMicrotask(callback)
    return true
  }
  process.stdout.write = capped
  return original
}
