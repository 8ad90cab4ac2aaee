/**
 * @module bench/hire-root
 * How a bench starts its root Run: hired by a fresh session of the bench's workshop from a
 * one-agent roster, waited for to its settled result, and cancelled when the bench is
 * interrupted (the verifier then reports what it left).
 */
import { EitriError } from '../errors/eitri-error.ts'
import type { AgentRuns } from '../ports/agent-runs.ts'
import type { WorkshopSession } from '../workshop/workshop-session.ts'

/** What to hire as the root. */
export interface RootHire {
  /** The root's definition, as a roster file holds it (checked at hire like any). */
  readonly agent: { readonly id: string } & Record<string, unknown>
  /** Named in errors about the roster. */
  readonly source: string
  readonly task: unknown
  /** Cancels the root. */
  readonly signal?: AbortSignal | undefined
}

/**
 * The agents port of a bench's session: it hires the root and settles it.
 * @throws EitriError `not_available` when the session can hire no agents (a workshop opened
 *   without them): a bench cannot run, and never skips a step for want of it.
 */
export function sessionAgents(session: WorkshopSession): AgentRuns {
  const agents = session.context().agents
  if (agents === undefined) {
    throw new EitriError(
      'not_available',
      "The bench's workshop session hires no agents, so its root can be neither hired nor settled; open the workshop with agents (its default).",
    )
  }
  return agents
}

/** Hires the root in `session`, waits for it to settle, and answers its id. */
export async function hireRoot(session: WorkshopSession, hire: RootHire): Promise<string> {
  const agents = sessionAgents(session)
  const id = await agents.hire({
    agent: hire.agent.id,
    roster: { content: { agents: [hire.agent] }, source: hire.source },
    task: hire.task,
  })
  const cancel = () => void agents.cancel(id).catch(() => undefined)
  hire.signal?.addEventListener('abort', cancel, { once: true })
  try {
    await agents.result(id)
  } finally {
    hire.signal?.removeEventListener('abort', cancel)
  }
  return id
}
