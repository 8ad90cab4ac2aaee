/**
 * @module eval/capabilities/http/http-capability
 * `http`: `fetch` behind three gates, each applied again at every redirect: the anchored host
 * allowlist from the configuration (empty by default: nothing is reachable), the SSRF guard
 * after DNS resolution, and the secret rules. Responses are capped in size and time and have
 * secret values masked.
 */
import { z } from 'zod'
import { EitriError } from '../../../errors/eitri-error.ts'
import { capabilityFunction, type Capability } from '../../capability.ts'
import type { CapabilitySettings } from '../../capability-settings.ts'
import { MAX_RESULT_BYTES } from '../../eval-limits.ts'
import { resolveChecked } from './address-guard.ts'
import { canonicalHost, hostAllowed } from './host-allowlist.ts'
import { placeholdersIn, secretMaskerFor, substituteSecrets } from './secret-placeholders.ts'
import { sendRequest, type RawResponse } from './send-request.ts'

/** Redirects followed before giving up. */
export const MAX_REDIRECTS = 5
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])
/** Headers never carried to another host on a redirect. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization'])

const init = z
  .strictObject({
    method: z
      .string()
      .regex(/^[A-Z]{3,10}$/, 'an upper-case method such as GET or POST')
      .optional(),
    headers: z.record(z.string(), z.string()).optional(),
    body: z.string().optional(),
  })
  .optional()

/** What `http.fetch` answers. */
export interface FetchAnswer {
  readonly status: number
  readonly statusText: string
  readonly ok: boolean
  readonly headers: Record<string, string>
  readonly body: string
  readonly url: string
  readonly redirected: boolean
}

/** Checks the allowlist and scheme of one hop's URL. */
function checkUrl(url: URL, settings: CapabilitySettings): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EitriError(
      'permission_denied',
      `http.fetch refused ${url.protocol} URLs: only http and https.`,
    )
  }
  if (url.username !== '' || url.password !== '') {
    throw new EitriError(
      'permission_denied',
      'http.fetch refused a URL with credentials in it; send them in a header.',
    )
  }
  if (!hostAllowed(url.hostname, settings.http.allow)) {
    const allowed =
      settings.http.allow.length === 0
        ? 'the allowlist is empty'
        : `allowed: ${settings.http.allow.join(', ')}`
    throw new EitriError(
      'permission_denied',
      `http.fetch refused ${canonicalHost(url.hostname)}: it is not on the HTTP allowlist (${allowed}). The person running eitri can add it under "http.allow" in the configuration.`,
    )
  }
}

/**
 * Fetches `address` with every gate; see the module documentation. Everything that reaches the
 * guest (the answer, and any error's message, which may quote a host a redirect named) has
 * every secret value masked.
 */
export async function guardedFetch(
  address: string,
  options: z.output<typeof init>,
  settings: CapabilitySettings,
  signal: AbortSignal,
): Promise<FetchAnswer> {
  const masker = secretMaskerFor(settings)
  const mask = (text: string): string => masker.text(text)
  // Node reads a status line and headers as Latin-1, one character per byte: masked as those bytes.
  const maskRaw = (text: string): string =>
    masker.bytes(Buffer.from(text, 'latin1')).toString('latin1')
  let answer: RawAnswer
  try {
    answer = await fetchHops(address, options, settings, signal)
  } catch (error) {
    if (EitriError.isInstance(error)) throw new EitriError(error.code, mask(error.message))
    throw error
  }
  return {
    status: answer.status,
    statusText: maskRaw(answer.statusText),
    ok: answer.ok,
    headers: Object.fromEntries(
      Object.entries(answer.headers).map(([name, value]) => [maskRaw(name), maskRaw(value)]),
    ),
    // Masked as bytes, before they become text: UTF-16 and other byte forms are seen whole.
    body: masker.bytes(answer.body).toString('utf8'),
    url: mask(answer.url),
    redirected: answer.redirected,
  }
}

/** A {@link FetchAnswer} before masking, its body as bytes. */
type RawAnswer = Omit<FetchAnswer, 'body'> & { readonly body: Buffer }

async function fetchHops(
  address: string,
  options: z.output<typeof init>,
  settings: CapabilitySettings,
  signal: AbortSignal,
): Promise<RawAnswer> {
  let url: URL
  try {
    url = new URL(address)
  } catch {
    throw new EitriError(
      'invalid_input',
      `http.fetch: ${JSON.stringify(address)} is not an absolute URL.`,
    )
  }
  const deadline = AbortSignal.any([signal, AbortSignal.timeout(settings.http.timeoutMs)])
  let method = options?.method ?? 'GET'
  let body = options?.body
  let headers: Record<string, string> = { ...options?.headers }
  for (let hop = 0; ; hop++) {
    checkUrl(url, settings)
    const filled = substituteSecrets({ url, headers, body }, settings)
    const checked = await resolveChecked(url.hostname, {
      allowLoopback: settings.http.testOnlyAllowLoopback,
      signal: deadline,
    })
    const response: RawResponse = await sendRequest({
      url,
      address: checked,
      method,
      headers: filled,
      body,
      maxResponseBytes: settings.http.maxResponseBytes,
      signal: deadline,
    })
    const location = response.headers['location']
    if (!REDIRECT_STATUSES.has(response.status) || location === undefined) {
      return {
        status: response.status,
        statusText: response.statusText,
        ok: response.status >= 200 && response.status < 300,
        headers: response.headers,
        body: response.body,
        url: url.href,
        redirected: hop > 0,
      }
    }
    if (hop >= MAX_REDIRECTS) {
      throw new EitriError(
        'limit_exceeded',
        `http.fetch: more than ${MAX_REDIRECTS} redirects from ${address}.`,
      )
    }
    const next = new URL(location, url)
    if (
      response.status === 303 ||
      ((response.status === 301 || response.status === 302) && method === 'POST')
    ) {
      method = 'GET'
      body = undefined
    }
    if (next.origin !== url.origin) {
      headers = Object.fromEntries(
        Object.entries(headers).filter(
          ([name, value]) =>
            !CREDENTIAL_HEADERS.has(name.toLowerCase()) && placeholdersIn(value).length === 0,
        ),
      )
    }
    url = next
  }
}

/** The `http` capability. */
export const httpCapability: Capability = {
  name: 'http',
  purpose:
    'Fetch URLs on the hosts the configuration allows (none by default), with secrets sent only where they are bound.',
  example:
    "const token = await env.get('GITHUB_TOKEN') // a placeholder, replaced by the host\nconst res = await http.fetch('https://api.github.com/user', { headers: { authorization: `Bearer ${token}` } })\nJSON.parse(res.body).login",
  functions: [
    capabilityFunction({
      name: 'fetch',
      signature:
        'fetch(url: string, init?: { method?, headers?, body?: string }): Promise<{ status, statusText, ok, headers, body, url, redirected }>',
      description:
        'One HTTP(S) request, redirects followed (and checked again). Only allowlisted hosts on public addresses; a refused request throws permission_denied saying why.',
      parameters: z.tuple([z.string().min(1), init]),
      run: async ([url, options], { settings, ctx, bytes }) => {
        // However large the configuration allows, one answer is at most MAX_RESULT_BYTES.
        const maxResponseBytes = Math.min(settings.http.maxResponseBytes, MAX_RESULT_BYTES)
        await bytes.reserve(maxResponseBytes)
        return guardedFetch(
          url,
          options,
          { ...settings, http: { ...settings.http, maxResponseBytes } },
          ctx.signal,
        )
      },
    }),
  ],
}
