/**
 * @module eval/capability-settings
 * What the capabilities are configured with: the HTTP allowlist and caps, the environment
 * names granted to the guest, the secrets and where each may be sent. Secret values are never
 * held here: they are read on the host at the moment a request is sent.
 */

/** Where one secret may go. */
export interface SecretBinding {
  /** The only host name its placeholder is replaced for (exact, lower case). */
  readonly domain: string
  /** The only request header it may appear in (lower case). */
  readonly header: string
}

/** The capabilities' configuration. */
export interface CapabilitySettings {
  readonly http: {
    /** Host names the guest may fetch: `api.github.com`, or `*.example.com` for subdomains. */
    readonly allow: readonly string[]
    readonly maxResponseBytes: number
    readonly timeoutMs: number
    /**
     * Lets requests reach loopback addresses (127.0.0.0/8, ::1). For tests only: no
     * configuration file can set it.
     */
    readonly testOnlyAllowLoopback: boolean
  }
  /** Environment variable names the guest may read with `env.get`. */
  readonly env: readonly string[]
  readonly secrets: Readonly<Record<string, SecretBinding>>
  /**
   * The variables holding model keys (each provider's key variable, and OPENAI_API_KEY and
   * ANTHROPIC_API_KEY always). The guest never reads them, but a key copied into a granted
   * variable, a file or a response would reach it: their values are masked like secrets'.
   */
  readonly keyVariables: readonly string[]
  /** Reads a variable of the server's environment (granted names, secrets and key variables only). */
  readonly readVariable: (name: string) => string | undefined
  /** Most `tools.call` calls per eval. */
  readonly toolCallBudget: number
}

/** Largest HTTP response body read. */
export const DEFAULT_MAX_RESPONSE_BYTES = 5 * 1024 * 1024
/** Time limit of one HTTP request, redirects included. */
export const DEFAULT_HTTP_TIMEOUT_MS = 30_000
