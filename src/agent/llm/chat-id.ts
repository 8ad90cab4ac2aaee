/**
 * @module agent/llm/chat-id
 * The id of a model Run's chat: a name-based (version 5) UUID of the Run's id, so the trace of
 * any Run can be found from its id alone, and two Runs never share a chat.
 */
import { createHash } from 'node:crypto'

/** The namespace of eitri's chat ids (a fixed random UUID, never to change). */
const CHAT_NAMESPACE = 'c5d2e7a4-3f61-4b8e-9a0d-6e1f2b7c8d90'

/** The chat id of the Run `runId`. */
export function runChatId(runId: string): string {
  return uuidV5(`eitri-agent-run|${runId}`, CHAT_NAMESPACE)
}

/** RFC 9562 version 5: SHA-1 over the namespace's bytes and the name, version and variant set. */
function uuidV5(name: string, namespace: string): string {
  const bytes = createHash('sha1')
    .update(Buffer.from(namespace.replaceAll('-', ''), 'hex'))
    .update(name, 'utf8')
    .digest()
    .subarray(0, 16)
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x50
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
