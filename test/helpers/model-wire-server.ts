/**
 * Test support: a fake model API on loopback that speaks the OpenAI chat-completions wire format
 * (`POST …/chat/completions`) and the Anthropic messages wire format (`POST …/messages`), plain
 * and streamed (server-sent events), so the AI SDK's real adapters can be driven with no network
 * and no key. Each request is answered by the next scripted reply and recorded, headers and body,
 * for the test to check what the adapter sent.
 *
 * Like the real servers, a chat-completions stream carries usage only when the request asks for
 * it (`stream_options.include_usage`), so a test sees whether the adapter asked.
 */
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

/** Token counts a reply reports. */
export interface WireUsage {
  readonly input: number
  readonly output: number
  /** Of `input`, how many were read from the cache. */
  readonly cachedInput?: number
}

/** What the server answers to one request. */
export type WireReply =
  | { readonly kind: 'text'; readonly text: string; readonly usage?: WireUsage }
  | {
      readonly kind: 'tool-call'
      readonly name: string
      readonly input: unknown
      readonly id?: string
      readonly usage?: WireUsage
    }
  /** An HTTP error in the format's own error body. */
  | {
      readonly kind: 'status'
      readonly status: number
      readonly headers?: Readonly<Record<string, string>>
      readonly message?: string
    }
  /** A streamed text whose connection is destroyed after `afterChunks` chunks. */
  | { readonly kind: 'drop-mid-stream'; readonly text: string; readonly afterChunks?: number }
  /**
   * No answer: the request is held open until the client goes away or the server closes, as a
   * model still thinking would; a test kills the caller meanwhile.
   */
  | { readonly kind: 'hold' }

/** One request as the server received it. */
export interface WireRequest {
  readonly format: 'openai' | 'anthropic'
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: Record<string, unknown>
  /** When it arrived, from `performance.now()`. */
  readonly at: number
}

/** A running fake model API. */
export interface ModelWireServer extends AsyncDisposable {
  /** The base URL for OpenAI and OpenAI-compatible adapters: `http://127.0.0.1:PORT/v1`. */
  readonly openaiURL: string
  /** The base URL for the Anthropic adapter: `http://127.0.0.1:PORT/v1`. */
  readonly anthropicURL: string
  /** Every request so far, in order. */
  readonly requests: readonly WireRequest[]
  /** Resolves once `count` requests have arrived; rejects after `timeoutMs` (default 30 s). */
  received(count: number, timeoutMs?: number): Promise<void>
  close(): Promise<void>
}

const DEFAULT_USAGE: WireUsage = { input: 11, output: 7 }

/**
 * Starts a fake model API on 127.0.0.1 (a free port). Replies are taken in order; a request past
 * the last one gets a 500 naming the mistake, so a test that calls more than it scripted fails.
 * A function may answer a promise: the reply goes out when it resolves.
 */
export async function startModelWireServer(
  replies:
    | readonly WireReply[]
    | ((request: WireRequest, index: number) => WireReply | Promise<WireReply>),
): Promise<ModelWireServer> {
  const requests: WireRequest[] = []
  const waiters = new Set<() => void>()
  const sockets = new Set<Socket>()
  const server = http.createServer((incoming, response) => {
    const chunks: Buffer[] = []
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
    incoming.on('end', () => {
      const path = incoming.url ?? '/'
      const format = path.endsWith('/chat/completions')
        ? 'openai'
        : path.endsWith('/messages')
          ? 'anthropic'
          : undefined
      let body: Record<string, unknown> = {}
      try {
        const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'))
        if (typeof parsed === 'object' && parsed !== null) body = parsed as Record<string, unknown>
      } catch {
        // Left empty: the scripted reply decides, and the test reads what arrived.
      }
      if (format === undefined || incoming.method !== 'POST') {
        response.writeHead(404, { 'content-type': 'application/json' })
        response.end(JSON.stringify({ error: { message: `no such endpoint: ${path}` } }))
        return
      }
      const request: WireRequest = {
        format,
        path,
        headers: incoming.headers,
        body,
        at: performance.now(),
      }
      const index = requests.length
      requests.push(request)
      for (const wake of [...waiters]) wake()
      const reply =
        typeof replies === 'function'
          ? replies(request, index)
          : (replies[index] ?? {
              kind: 'status',
              status: 500,
              message: `the test scripted ${replies.length} replies and this is request ${index + 1}`,
            })
      // A promised reply is sent when it resolves: a model answering when the test says so.
      void Promise.resolve(reply).then((ready) => answer(format, body, ready, response))
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const close = async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  const received = (count: number, timeoutMs = 30_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (requests.length < count) return
        waiters.delete(check)
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        waiters.delete(check)
        reject(new Error(`the model server got ${requests.length} of ${count} requests`))
      }, timeoutMs)
      waiters.add(check)
      check()
    })
  return {
    openaiURL: `http://127.0.0.1:${port}/v1`,
    anthropicURL: `http://127.0.0.1:${port}/v1`,
    requests,
    received,
    close,
    [Symbol.asyncDispose]: close,
  }
}

function answer(
  format: 'openai' | 'anthropic',
  body: Record<string, unknown>,
  reply: WireReply,
  response: http.ServerResponse,
): void {
  // Held open: closing the server destroys the socket.
  if (reply.kind === 'hold') return
  if (reply.kind === 'status') {
    response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers })
    const message = reply.message ?? `scripted status ${reply.status}`
    response.end(
      JSON.stringify(
        format === 'openai'
          ? { error: { message, type: reply.status === 429 ? 'rate_limit_error' : 'server_error' } }
          : {
              type: 'error',
              error: { type: reply.status === 429 ? 'rate_limit_error' : 'api_error', message },
            },
      ),
    )
    return
  }
  const model = typeof body['model'] === 'string' ? body['model'] : 'unknown'
  if (body['stream'] !== true) {
    if (reply.kind === 'drop-mid-stream') {
      response.socket?.destroy()
      return
    }
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(
      JSON.stringify(format === 'openai' ? openaiBody(model, reply) : anthropicBody(model, reply)),
    )
    return
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  const events =
    format === 'openai'
      ? openaiEvents(model, reply, includeUsage(body))
      : anthropicEvents(model, reply)
  if (reply.kind === 'drop-mid-stream') {
    for (const event of events.slice(0, reply.afterChunks ?? 2)) response.write(event)
    // Let the chunks leave before the connection is cut, as a server dying mid-answer would.
    setTimeout(() => response.socket?.destroy(), 20)
    return
  }
  for (const event of events) response.write(event)
  response.end()
}

function includeUsage(body: Record<string, unknown>): boolean {
  const options = body['stream_options']
  return (
    typeof options === 'object' &&
    options !== null &&
    (options as Record<string, unknown>)['include_usage'] === true
  )
}

type Answer = Exclude<WireReply, { kind: 'status' } | { kind: 'hold' }>

function usageOf(reply: Answer): WireUsage {
  return reply.kind === 'drop-mid-stream' ? DEFAULT_USAGE : (reply.usage ?? DEFAULT_USAGE)
}

function callId(reply: Answer & { kind: 'tool-call' }, format: 'openai' | 'anthropic'): string {
  return reply.id ?? (format === 'openai' ? 'call_1' : 'toolu_1')
}

/** Splits text into a few pieces, as a stream would deliver it. */
function pieces(text: string): string[] {
  const size = Math.max(1, Math.ceil(text.length / 3))
  const out: string[] = []
  for (let start = 0; start < text.length; start += size) out.push(text.slice(start, start + size))
  return out
}

// --- OpenAI chat completions --------------------------------------------------------------

function openaiUsage(usage: WireUsage) {
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cachedInput ?? 0 },
  }
}

function openaiBody(model: string, reply: Answer) {
  const message =
    reply.kind === 'tool-call'
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: callId(reply, 'openai'),
              type: 'function',
              function: { name: reply.name, arguments: JSON.stringify(reply.input) },
            },
          ],
        }
      : { role: 'assistant', content: reply.text }
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [
      { index: 0, message, finish_reason: reply.kind === 'tool-call' ? 'tool_calls' : 'stop' },
    ],
    usage: openaiUsage(usageOf(reply)),
  }
}

function openaiEvents(model: string, reply: Answer, withUsage: boolean): string[] {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices, ...extra })}\n\n`
  const events: string[] = []
  if (reply.kind === 'tool-call') {
    const args = JSON.stringify(reply.input)
    events.push(
      chunk([
        {
          index: 0,
          delta: {
            role: 'assistant',
            tool_calls: [
              {
                index: 0,
                id: callId(reply, 'openai'),
                type: 'function',
                function: { name: reply.name, arguments: '' },
              },
            ],
          },
          finish_reason: null,
        },
      ]),
    )
    for (const piece of pieces(args)) {
      events.push(
        chunk([
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] },
            finish_reason: null,
          },
        ]),
      )
    }
    events.push(chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]))
  } else {
    events.push(
      chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
    )
    for (const piece of pieces(reply.text)) {
      events.push(chunk([{ index: 0, delta: { content: piece }, finish_reason: null }]))
    }
    events.push(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]))
  }
  if (withUsage) events.push(chunk([], { usage: openaiUsage(usageOf(reply)) }))
  events.push('data: [DONE]\n\n')
  return events
}

// --- Anthropic messages --------------------------------------------------------------------

function anthropicUsage(usage: WireUsage) {
  return {
    input_tokens: usage.input - (usage.cachedInput ?? 0),
    output_tokens: usage.output,
    cache_read_input_tokens: usage.cachedInput ?? 0,
    cache_creation_input_tokens: 0,
  }
}

function anthropicBody(model: string, reply: Answer) {
  return {
    id: 'msg_test',
    type: 'message',
    role: 'assistant',
    model,
    content:
      reply.kind === 'tool-call'
        ? [
            {
              type: 'tool_use',
              id: callId(reply, 'anthropic'),
              name: reply.name,
              input: reply.input,
            },
          ]
        : [{ type: 'text', text: reply.text }],
    stop_reason: reply.kind === 'tool-call' ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: anthropicUsage(usageOf(reply)),
  }
}

function anthropicEvents(model: string, reply: Answer): string[] {
  const event = (data: Record<string, unknown>) =>
    `event: ${String(data['type'])}\ndata: ${JSON.stringify(data)}\n\n`
  const usage = anthropicUsage(usageOf(reply))
  const events = [
    event({
      type: 'message_start',
      message: {
        id: 'msg_test',
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    }),
  ]
  if (reply.kind === 'tool-call') {
    events.push(
      event({
        type: 'content_block_start',
        index: 0,
        content_block: {
          type: 'tool_use',
          id: callId(reply, 'anthropic'),
          name: reply.name,
          input: {},
        },
      }),
    )
    for (const piece of pieces(JSON.stringify(reply.input))) {
      events.push(
        event({
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: piece },
        }),
      )
    }
  } else {
    events.push(
      event({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    )
    for (const piece of pieces(reply.text)) {
      events.push(
        event({
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: piece },
        }),
      )
    }
  }
  events.push(
    event({ type: 'content_block_stop', index: 0 }),
    event({
      type: 'message_delta',
      delta: {
        stop_reason: reply.kind === 'tool-call' ? 'tool_use' : 'end_turn',
        stop_sequence: null,
      },
      usage: { output_tokens: usage.output_tokens },
    }),
    event({ type: 'message_stop' }),
  )
  return events
}
