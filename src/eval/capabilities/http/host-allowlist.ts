/**
 * @module eval/capabilities/http/host-allowlist
 * The HTTP allowlist, anchored: `api.github.com` allows that host only (never
 * `api.github.com.evil.example` or `evilapi.github.com`), `*.example.com` allows its subdomains
 * (not `example.com` itself). Names are compared in their canonical URL form (lower case,
 * punycode, no trailing dot). An empty list allows nothing.
 */

/** The canonical form of a host name as the URL parser gives it, without a trailing dot. */
export function canonicalHost(hostname: string): string {
  const host = hostname.toLowerCase()
  return host.endsWith('.') ? host.slice(0, -1) : host
}

/** True when `hostname` is allowed by one of `patterns`. */
export function hostAllowed(hostname: string, patterns: readonly string[]): boolean {
  const host = canonicalHost(hostname)
  return patterns.some((pattern) => {
    const wanted = canonicalHost(pattern)
    if (wanted.startsWith('*.')) {
      const suffix = wanted.slice(1)
      return host.endsWith(suffix) && host.length > suffix.length
    }
    return host === wanted
  })
}
