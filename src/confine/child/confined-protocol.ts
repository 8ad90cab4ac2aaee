/**
 * @module confine/child/confined-protocol
 * How a parent and the child runner (`confined-main.ts`) talk: the request goes in as JSON on
 * stdin; the answer comes back as one envelope line on stdout, after a marker that is fresh
 * for each call, so nothing the function prints can be taken for it. Everything else on
 * stdout is what the function printed.
 */
import { randomUUID } from 'node:crypto'
import { z } from 'zod'

/** What the child runner reads on stdin. */
export interface ConfinedRequest {
  /** The module's `file:` URL. */
  readonly module: string
  readonly export: string
  readonly input: unknown
  /** The scratch folder as the child sees it. */
  readonly workdir: string
  /** Leads the envelope line. */
  readonly marker: string
  /** The most bytes of in-process output forwarded; the rest is dropped and counted. */
  readonly maxOutputBytes: number
}

/** What the child answers: the function's result, or why there is none. */
export type Envelope = { readonly result?: unknown } | { readonly error: string }

/** A fresh marker for one call. */
export function newMarker(): string {
  return `@@eitri-confined-result:${randomUUID()}@@`
}

/** What opens the envelope line: a newline (so it starts a line of its own), then the marker. */
export function envelopeStart(marker: string): string {
  return `\n${marker}`
}

/** The envelope line the child writes last. JSON holds no raw newline, so it is one line. */
export function envelopeLine(marker: string, envelope: Envelope): string {
  return `${envelopeStart(marker)}${JSON.stringify(envelope)}\n`
}

/**
 * The envelope's shape: the child writes it, and the child runs the code being confined, so
 * it is checked like anything else that code could write.
 */
const envelopeSchema = z.union([
  z.strictObject({ error: z.string() }),
  z.strictObject({ result: z.unknown() }),
  z.strictObject({}),
])

/** Parses an envelope line's JSON (after the marker); undefined when it is not one. */
export function parseEnvelope(json: string): Envelope | undefined {
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    return undefined
  }
  const parsed = envelopeSchema.safeParse(value)
  if (!parsed.success) return undefined
  return 'error' in parsed.data
    ? { error: parsed.data.error }
    : 'result' in parsed.data
      ? { result: parsed.data.result }
      : {}
}
