/**
 * @module eval/capabilities/http/secret-placeholders
 * Secrets travel as placeholders (`${secret:NAME}`): `env.get` hands them out, and only the host
 * replaces one with its value, only in an https request to the host the secret is bound to and
 * only in the header it is bound to. A placeholder anywhere else (the URL, the body, another
 * header, another host, plain http) refuses the whole request. Whatever comes back has every
 * secret value masked with its placeholder again, in every form `secret-forms.ts` lists.
 */
import { EitriError } from '../../../errors/eitri-error.ts'
import type { CapabilitySettings } from '../../capability-settings.ts'
import { canonicalHost } from './host-allowlist.ts'
import { secretMasker, type SecretMasker } from './secret-forms.ts'

const PLACEHOLDER = /\$\{secret:([A-Za-z_][A-Za-z0-9_]*)\}/g

/** The placeholder that stands for secret `name`. */
export function placeholder(name: string): string {
  return `\${secret:${name}}`
}

/** The secret names `text` mentions. */
export function placeholdersIn(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((match) => match[1] as string)
}

/** A request as the guest wrote it. */
export interface OutgoingRequest {
  readonly url: URL
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | undefined
}

/**
 * Checks every placeholder of `request` and answers its headers with the values filled in.
 *
 * @throws EitriError `permission_denied` for a placeholder out of place or of an unknown secret.
 */
export function substituteSecrets(
  request: OutgoingRequest,
  settings: Pick<CapabilitySettings, 'secrets' | 'readVariable'>,
): Record<string, string> {
  const refuse = (where: string, names: string[]): never => {
    throw new EitriError(
      'permission_denied',
      `http.fetch refused: secret ${names.join(', ')} may not be sent in ${where}. A secret is only sent to the host it is bound to, in the header it is bound to.`,
    )
  }
  const inUrl = placeholdersIn(request.url.href.replaceAll('%7B', '{').replaceAll('%7D', '}'))
  if (inUrl.length > 0) refuse('the URL', inUrl)
  const inBody = placeholdersIn(request.body ?? '')
  if (inBody.length > 0) refuse('the body', inBody)
  const host = canonicalHost(request.url.hostname)
  const inHeaders = Object.values(request.headers).flatMap((value) => placeholdersIn(value))
  if (inHeaders.length > 0 && request.url.protocol !== 'https:') {
    // Anyone on the way reads a plain http request: a bound host does not make it private.
    throw new EitriError(
      'permission_denied',
      `http.fetch refused: secret ${[...new Set(inHeaders)].join(', ')} may only be sent over https, and ${request.url.protocol}//${request.url.host} is plain ${request.url.protocol.slice(0, -1)}. Use an https:// URL.`,
    )
  }
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) {
    const header = name.toLowerCase()
    const inName = placeholdersIn(name)
    if (inName.length > 0) refuse('a header name', inName)
    const names = placeholdersIn(value)
    let filled = value
    for (const secret of new Set(names)) {
      const binding = settings.secrets[secret]
      if (binding === undefined) refuse(`header ${header} (no such secret is configured)`, [secret])
      if (binding?.header !== header)
        refuse(`header ${header} (it is bound to ${binding?.header})`, [secret])
      if (binding?.domain !== host)
        refuse(`a request to ${host} (it is bound to ${binding?.domain})`, [secret])
      const secretValue = settings.readVariable(secret)
      if (secretValue === undefined || secretValue === '') {
        throw new EitriError(
          'not_found',
          `http.fetch: secret ${secret} has no value: set the environment variable ${secret} where the server runs.`,
        )
      }
      filled = filled.replaceAll(placeholder(secret), secretValue)
    }
    headers[header] = filled
  }
  return headers
}

/**
 * What stands for the value of model key variable `name` where it is masked. No capability
 * replaces it with the value: a model key is only ever sent by the host's model client.
 */
export function keyPlaceholder(name: string): string {
  return `\${model-key:${name}}`
}

/** The settings a masker reads: the secrets, the model key variables, and their values. */
export type MaskSettings = Pick<CapabilitySettings, 'secrets' | 'keyVariables' | 'readVariable'>

/**
 * A masker of every configured secret's value and every model key's, in every form
 * `secret-forms.ts` lists (as it is, in any case, JSON- or URL-escaped, as HTML references, hex,
 * UTF-16 or base64), with its placeholder. Values are read now: make one per response.
 */
export function secretMaskerFor(settings: MaskSettings): SecretMasker {
  return secretMasker([
    ...Object.keys(settings.secrets).map((name) => ({
      value: settings.readVariable(name) ?? '',
      placeholder: placeholder(name),
    })),
    ...settings.keyVariables.map((name) => ({
      value: settings.readVariable(name) ?? '',
      placeholder: keyPlaceholder(name),
    })),
  ])
}

/** `text` with every configured secret's and model key's value masked (see {@link secretMaskerFor}). */
export function maskSecrets(text: string, settings: MaskSettings): string {
  return secretMaskerFor(settings).text(text)
}
