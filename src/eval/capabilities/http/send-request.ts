/**
 * @module eval/capabilities/http/send-request
 * One HTTP exchange to an address already checked: the connection goes to that address (the
 * name is used for the Host header and TLS only), the body read stops at the size cap, and the
 * whole exchange ends with the signal.
 */
import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import { EitriError } from '../../../errors/eitri-error.ts'
import type { CheckedAddress } from './address-guard.ts'

/** One response, its body as bytes (masked before it becomes text). */
export interface RawResponse {
  readonly status: number
  readonly statusText: string
  readonly headers: Record<string, string>
  readonly body: Buffer
}

/** Sends one request to `address` and reads the response. */
export function sendRequest(options: {
  readonly url: URL
  readonly address: CheckedAddress
  readonly method: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | undefined
  readonly maxResponseBytes: number
  readonly signal: AbortSignal
}): Promise<RawResponse> {
  const { url, address } = options
  // Every lookup answers the checked address: the name cannot be resolved a second time.
  const pinned = ((_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all === true) {
      ;(callback as (error: null, addresses: { address: string; family: number }[]) => void)(null, [
        { address: address.address, family: address.family },
      ])
    } else {
      callback(null, address.address, address.family)
    }
  }) as LookupFunction
  const client = url.protocol === 'https:' ? https : http
  return new Promise((resolve, reject) => {
    let request: http.ClientRequest
    try {
      request = client.request(url, {
        method: options.method,
        headers: options.headers,
        lookup: pinned,
        signal: options.signal,
        agent: false,
      })
    } catch (error) {
      reject(new EitriError('invalid_input', `http.fetch: ${(error as Error).message}`))
      return
    }
    request.once('error', (error) => {
      reject(
        options.signal.aborted
          ? new EitriError(
              'timeout',
              `http.fetch: ${url.host} did not answer in time (or the eval ended).`,
            )
          : new EitriError(
              'tool_failed',
              `http.fetch: ${url.host}: ${(error as NodeJS.ErrnoException).code ?? error.message}`,
            ),
      )
    })
    request.once('response', (response) => {
      const chunks: Buffer[] = []
      let bytes = 0
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length
        if (bytes > options.maxResponseBytes) {
          response.destroy()
          request.destroy()
          reject(
            new EitriError(
              'limit_exceeded',
              `http.fetch: the response of ${url.host} is over ${options.maxResponseBytes} bytes, the most one fetch reads.`,
            ),
          )
          return
        }
        chunks.push(chunk)
      })
      response.once('error', (error) =>
        reject(new EitriError('tool_failed', `http.fetch: ${error.message}`)),
      )
      response.once('end', () => {
        const headers: Record<string, string> = {}
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
        }
        resolve({
          status: response.statusCode ?? 0,
          statusText: response.statusMessage ?? '',
          headers,
          body: Buffer.concat(chunks),
        })
      })
    })
    request.end(options.body)
  })
}
