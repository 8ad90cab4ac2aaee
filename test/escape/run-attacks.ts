/**
 * Runs every attack for one caller and prints one JSON line of results on stdout.
 * Started by test/jail-escape.test.ts, once as root and once as uid 65534, with a file at
 * descriptor EITRI_ESCAPE_FD (attack 20) and secrets in the environment (attacks 21, 22).
 *
 * Usage: node run-attacks.ts root|unprivileged [CLASS,...]
 */
import { ATTACKS, attackKey } from './attacks.ts'
import { createContext } from './context.ts'
import type { AttackReport, Caller } from './helpers.ts'

/** An attack that takes longer than this fails rather than hang the suite. */
const ATTACK_TIMEOUT_MS = 60_000

const caller = process.argv[2] as Caller
const isRoot = process.getuid?.() === 0
if (caller !== (isRoot ? 'root' : 'unprivileged')) {
  throw new Error(
    `asked to run as ${caller}, but this process is ${isRoot ? 'root' : 'unprivileged'}`,
  )
}
const only = process.argv[3]?.split(',').map(Number)
// Attack 20 first: the first jail closes the inherited descriptor its control writes to.
const attacks = ATTACKS.filter(
  (attack) => attack.callers.includes(caller) && (only === undefined || only.includes(attack.id)),
).sort((a, b) => Number(b.id === 20) - Number(a.id === 20))
const reports: AttackReport[] = []
for (const attack of attacks) {
  const started = performance.now()
  const ctx = createContext(caller, attack)
  let timer: NodeJS.Timeout | undefined
  try {
    const outcome = await Promise.race([
      attack.run(ctx),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`timed out after ${ATTACK_TIMEOUT_MS} ms`)),
          ATTACK_TIMEOUT_MS,
        )
      }),
    ])
    reports.push({ key: attackKey(attack), ...outcome, durationMs: performance.now() - started })
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error)
    reports.push({
      key: attackKey(attack),
      error: message,
      durationMs: performance.now() - started,
    })
  } finally {
    clearTimeout(timer)
    await ctx.close()
  }
}
process.stdout.write(`${JSON.stringify({ caller, reports })}\n`)
