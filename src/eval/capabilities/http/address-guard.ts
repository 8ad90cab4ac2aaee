/**
 * @module eval/capabilities/http/address-guard
 * The SSRF guard: a request may only reach public unicast addresses, checked after DNS
 * resolution (every address the name resolves to), and the connection is then made to the
 * checked address itself, so a second lookup cannot swap in another (DNS rebinding). Loopback,
 * private, link-local (cloud metadata at 169.254.169.254), unique-local, carrier-grade NAT,
 * multicast, reserved and IPv6 forms that embed an IPv4 address are refused.
 */
import { lookup } from 'node:dns/promises'
import net from 'node:net'
import ipaddr from 'ipaddr.js'
import { EitriError } from '../../../errors/eitri-error.ts'

/** An address a request may connect to. */
export interface CheckedAddress {
  readonly address: string
  readonly family: 4 | 6
}

/** Why `address` may not be reached, or undefined when it may. */
export function addressRefusal(address: string, allowLoopback: boolean): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6
  try {
    parsed = ipaddr.parse(address)
  } catch {
    return 'it is not an IP address'
  }
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address()
  }
  const range = parsed.range()
  if (range === 'unicast') return undefined
  if (range === 'loopback' && allowLoopback) return undefined
  return `it is a ${range} address`
}

/**
 * Resolves `hostname` and checks every address.
 *
 * @throws EitriError `permission_denied` naming the refused address, `not_found` when the name
 *   does not resolve.
 */
export async function resolveChecked(
  hostname: string,
  options: { readonly allowLoopback: boolean; readonly signal?: AbortSignal },
): Promise<CheckedAddress> {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname
  let addresses: { address: string; family: number }[]
  if (net.isIP(bare) !== 0) {
    addresses = [{ address: bare, family: net.isIP(bare) }]
  } else {
    try {
      addresses = await lookup(bare, { all: true, verbatim: true })
    } catch (error) {
      throw new EitriError(
        'not_found',
        `http.fetch: ${bare} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'lookup failed'}).`,
      )
    }
  }
  options.signal?.throwIfAborted()
  for (const { address } of addresses) {
    const refusal = addressRefusal(address, options.allowLoopback)
    if (refusal !== undefined) {
      throw new EitriError(
        'permission_denied',
        `http.fetch refused ${bare}: it resolves to ${address}, and ${refusal}; requests may only reach public addresses.`,
      )
    }
  }
  const first = addresses[0]
  if (first === undefined) throw new EitriError('not_found', `http.fetch: ${bare} has no address.`)
  return { address: first.address, family: first.family === 6 ? 6 : 4 }
}
