/**
 * @module eval/eval-limits
 * The default limits of the code sandbox. Every one can be changed by the embedder.
 */

/** Wall-clock limit of one eval. */
export const DEFAULT_EVAL_TIMEOUT_MS = 60_000
/** Longest timeout a caller may ask for. */
export const MAX_EVAL_TIMEOUT_MS = 600_000
/** Heap limit of one session. */
export const DEFAULT_MEMORY_LIMIT_MB = 128
/** Sessions alive at once, per server; the least recently used is ended to make room. */
export const DEFAULT_MAX_SESSIONS = 16
/**
 * Evals one owner (an MCP connection, a library caller) runs at once; its further evals wait
 * their turn, so that one connection cannot take the whole sandbox from the others.
 */
export const DEFAULT_OWNER_RUNNING_EVALS = 4
/** A session unused this long is ended. */
export const DEFAULT_IDLE_TIMEOUT_MS = 30 * 60_000
/** `tools.call` calls one eval may make. */
export const DEFAULT_TOOL_CALL_BUDGET = 100
/** Capability calls of any kind one eval may make. */
export const MAX_CAPABILITY_CALLS = 10_000
/** Capability calls one eval may have in flight at once. */
export const MAX_CONCURRENT_CAPABILITY_CALLS = 64
/** Longest code accepted, in characters. */
export const MAX_CODE_CHARS = 1_000_000
/** Characters of a rendered value kept (inside the isolate). */
export const MAX_VALUE_CHARS = 50_000
/** Characters of console output kept (inside the isolate). */
export const MAX_OUTPUT_CHARS = 50_000
/** Characters of one capability call's JSON arguments. */
export const MAX_ARGUMENT_CHARS = 32 * 1024 * 1024
/** Characters of JSON arguments of one eval's calls in flight at once (in the sandbox). */
export const MAX_ARGUMENT_CHARS_IN_FLIGHT = 64 * 1024 * 1024
/**
 * Bytes of data one capability call answers at most: a file read, a drive read, an HTTP
 * response. Larger data is read in parts (`fs.readRange`).
 */
export const MAX_RESULT_BYTES = 16 * 1024 * 1024
/** Bytes the capability calls of one eval may hold at once; more calls wait their turn. */
export const SESSION_BYTES_IN_FLIGHT = 64 * 1024 * 1024
/** Bytes the capability calls of every session of one owner may hold at once. */
export const OWNER_BYTES_IN_FLIGHT = 128 * 1024 * 1024
/** Bytes the capability calls of every session of a server may hold at once. */
export const SERVER_BYTES_IN_FLIGHT = 256 * 1024 * 1024
/**
 * What a `tools.call` reserves while its tool runs: the tool itself may hold this much (a
 * file read) before its result is cut to size.
 */
export const TOOL_CALL_RESERVED_BYTES = 8 * 1024 * 1024
/** Characters of one capability answer sent into the isolate. */
export const MAX_ANSWER_CHARS = 32 * 1024 * 1024
/** Nesting depth of JSON crossing the boundary. */
export const MAX_JSON_DEPTH = 64
/** How long after a cancel the eval should have answered before the server pings the sandbox. */
export const CANCEL_GRACE_MS = 1_000
/**
 * How long past its timeout an eval may take before the server pings the sandbox (and answers
 * for the eval if a live sandbox still has not).
 */
export const TIMEOUT_GRACE_MS = 1_000
