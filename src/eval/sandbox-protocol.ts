/**
 * @module eval/sandbox-protocol
 * The messages between the server and its sandbox process (JSON lines over pipes). The server
 * trusts nothing the sandbox says: every line from it is bounded in length and validated against
 * {@link sandboxMessageSchema} before it is acted on.
 */
import { z } from 'zod'
import { MAX_ARGUMENT_CHARS } from './eval-limits.ts'
import type { EvalOutcome } from './eval-outcome.ts'

/**
 * The pipes between the server and its sandbox, as file descriptors of the sandbox: each way a
 * lane for small messages and one for large ones (`line-writer.ts`), so that a large message
 * never holds back a small one. The server writes small messages to the sandbox's stdin.
 */
export const SANDBOX_PIPES = {
  /** Sandbox → server, small messages. */
  smallToServer: 3,
  /** Sandbox → server, large messages. */
  largeToServer: 4,
  /** Server → sandbox, large messages. */
  largeToSandbox: 5,
} as const

/** Server → sandbox. */
export type HostMessage =
  | {
      readonly type: 'create'
      readonly session: string
      readonly memoryLimitMb: number
      readonly namespaces: Readonly<Record<string, readonly string[]>>
    }
  | {
      readonly type: 'eval'
      readonly session: string
      readonly evalId: number
      readonly code: string
      readonly timeoutMs: number
    }
  | { readonly type: 'cancel'; readonly evalId: number }
  | {
      readonly type: 'reply'
      readonly evalId: number
      readonly callId: number
      /** JSON of the answer, when the call succeeded. */
      readonly value?: string
      /** Why it failed, with a message safe to show the guest. */
      readonly error?: { readonly code: string; readonly message: string }
    }
  | { readonly type: 'dispose'; readonly session: string }
  | { readonly type: 'stats'; readonly requestId: number }

const name = z.string().max(200)
const id = z.number().int().nonnegative()
const text = z.string().max(4 * 1024 * 1024)

const outcomeSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('value'), value: text, valueType: name, output: text }),
  z.strictObject({
    type: z.literal('error'),
    code: z.enum(['eval_error', 'timeout', 'cancelled', 'memory_limit', 'sandbox_reset']),
    message: text,
    stack: text.optional(),
    output: text,
    stateKept: z.boolean(),
  }),
])

/** Sandbox → server, validated. */
export const sandboxMessageSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('ready'), pid: id }),
  z.strictObject({
    type: z.literal('created'),
    session: name,
    error: z.string().max(10_000).optional(),
  }),
  z.strictObject({
    type: z.literal('call'),
    evalId: id,
    callId: id,
    namespace: name,
    name,
    args: z.string().max(MAX_ARGUMENT_CHARS),
  }),
  z.strictObject({ type: z.literal('result'), evalId: id, outcome: outcomeSchema }),
  z.strictObject({ type: z.literal('stats'), requestId: id, rss: id, sessions: id }),
])

/** A message from the sandbox. */
export type SandboxMessage = z.output<typeof sandboxMessageSchema>

/** The outcome as it crosses; the same shape as {@link EvalOutcome}. */
export type WireOutcome = EvalOutcome
