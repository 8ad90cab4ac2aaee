/**
 * @module mcp/message-limit
 * The largest MCP message eitri reads, and what a client is told when one is larger: what
 * was refused and how to send the same work in parts.
 */

/** Largest request body (HTTP) or message line (stdio) accepted, so a whole file can be written in one call. */
export const MAX_REQUEST_BYTES = 64 * 1024 * 1024

/** Bytes kept of each end of a line too long to read, to find its request id. */
export const CUT_END_BYTES = 256

/**
 * The answer to a message over {@link MAX_REQUEST_BYTES}: what happened (nothing ran) and
 * what to do instead, for a model to act on.
 */
export function tooLargeText(bytes: number | undefined): string {
  const size = bytes === undefined ? 'a message' : `a message of ${bytes} bytes`
  return (
    `Request too large: ${size}, over the limit of ${MAX_REQUEST_BYTES} bytes (64 MiB); it was not read and nothing was done. ` +
    'Send the content in parts, each call under the limit: write_file with the first part, then append the rest (shell `cat >> FILE`), ' +
    'or room_write several smaller files; or have a command in the jail (shell) make the file from what the workspace holds.'
  )
}

const ID = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`
/** A request that names its id first: `{"jsonrpc":"2.0","id":7,…` (Python's SDK, most hand-written clients). */
const ID_AT_HEAD = new RegExp(
  String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID}`,
)
/** A request that names its id last: `…,"jsonrpc":"2.0","id":7}` (the TypeScript SDK). */
const ID_AT_TAIL = new RegExp(String.raw`"id"\s*:\s*${ID}\s*\}\s*$`)

/**
 * The id of a JSON-RPC request from the two ends of its line, which was not read whole: so the
 * error answers the call that sent it, which a client would otherwise wait on until its own
 * timeout. Null when neither end names one (a notification, or not JSON-RPC).
 */
export function idOfCutMessage(head: string, tail: string): string | number | null {
  const found = ID_AT_HEAD.exec(head) ?? ID_AT_TAIL.exec(tail)
  if (found?.[1] === undefined) return null
  try {
    const id: unknown = JSON.parse(found[1])
    return typeof id === 'number' || typeof id === 'string' ? id : null
  } catch {
    return null
  }
}
