/**
 * @module agent/llm/message-tokens
 * The token estimate of a conversation without serializing it whole at every step. Each
 * message's JSON is measured once (ASCII characters and UTF-8 bytes, kept per message object),
 * and the conversation's estimate is put together from those, exactly as
 * `estimateTokens(JSON.stringify(messages))` would give it: a long Run does not pay for its
 * whole history on every model call.
 */
import type { ModelMessage } from 'ai'

/** The ASCII characters and UTF-8 bytes of one message's JSON. */
interface MessageSize {
  readonly ascii: number
  readonly bytes: number
}

// Keyed by the message object: the loop never changes a message once it is in the
// conversation (compaction makes new ones), so a size measured once stays right.
const sizes = new WeakMap<ModelMessage, MessageSize>()

/**
 * The tokens `messages` are estimated to take: the same number as
 * `estimateTokens(JSON.stringify(messages))`, each message measured once.
 */
export function conversationTokens(messages: readonly ModelMessage[]): number {
  // The array's brackets and the commas between its items.
  let ascii = messages.length === 0 ? 2 : messages.length + 1
  let bytes = ascii
  for (const message of messages) {
    const size = sizeOf(message)
    ascii += size.ascii
    bytes += size.bytes
  }
  return Math.ceil(ascii / 3) + (bytes - ascii)
}

function sizeOf(message: ModelMessage): MessageSize {
  const known = sizes.get(message)
  if (known !== undefined) return known
  const text = JSON.stringify(message)
  let ascii = 0
  for (let index = 0; index < text.length; index++) {
    if (text.charCodeAt(index) < 0x80) ascii++
  }
  const size = { ascii, bytes: Buffer.byteLength(text, 'utf8') }
  sizes.set(message, size)
  return size
}
