/**
 * @module eval/host/sandbox-liveness
 * Tells a dead sandbox from a busy one. Every session of a server lives in the one sandbox
 * process, so killing it loses every connection's definitions: it is only done when the
 * sandbox has stopped making progress. A sandbox moving large messages answers a ping late but
 * keeps sending bytes; a hung one sends nothing at all.
 */

/** How long a sandbox that owes a ping answer may also send nothing before it counts as hung. */
export const SILENCE_LIMIT_MS = 10_000
/** How long a ping may go unanswered, whatever else the sandbox sends. */
export const PING_LIMIT_MS = 60_000
/** How often the silence is looked at while a ping is owed. */
const CHECK_INTERVAL_MS = 250

/** What a probe found. */
export type Liveness = 'alive' | 'exited' | 'hung'

/** What a probe watches. */
export interface LivenessProbe {
  /** Settles when the sandbox answers the ping (rejects when it cannot). */
  readonly ping: Promise<unknown>
  /** When the sandbox last sent anything, in `performance.now()` time. */
  readonly lastHeardAt: () => number
  /** False once the process has ended. */
  readonly alive: () => boolean
  /** @default SILENCE_LIMIT_MS */
  readonly silenceLimitMs?: number | undefined
  /** @default PING_LIMIT_MS */
  readonly pingLimitMs?: number | undefined
}

/**
 * Waits until the sandbox answers the ping (`alive`), ends (`exited`), or owes the answer while
 * sending nothing for `silenceLimitMs`, or for `pingLimitMs` whatever it sends (`hung`).
 */
export function probeLiveness(probe: LivenessProbe): Promise<Liveness> {
  const silenceLimitMs = probe.silenceLimitMs ?? SILENCE_LIMIT_MS
  const pingLimitMs = probe.pingLimitMs ?? PING_LIMIT_MS
  const started = performance.now()
  return new Promise<Liveness>((resolve) => {
    let settled = false
    const settle = (liveness: Liveness): void => {
      if (settled) return
      settled = true
      clearInterval(timer)
      resolve(liveness)
    }
    const look = (): void => {
      if (!probe.alive()) return settle('exited')
      const now = performance.now()
      // Only silence since the ping counts: a sandbox idle before it owed nothing.
      const silentFor = now - Math.max(probe.lastHeardAt(), started)
      if (silentFor >= silenceLimitMs || now - started >= pingLimitMs) settle('hung')
    }
    const timer = setInterval(look, Math.min(CHECK_INTERVAL_MS, silenceLimitMs))
    timer.unref()
    probe.ping.then(
      () => settle('alive'),
      () => settle(probe.alive() ? 'hung' : 'exited'),
    )
  })
}
