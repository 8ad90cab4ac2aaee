/**
 * Test support: hires one agent, given by its definition (a one-agent roster, as a roster
 * file holds it), from a workshop session, and waits for its settled result.
 */
import assert from 'node:assert/strict'
import type { RunOutcome } from '../../src/ports/agent-runs.ts'
import type { WorkshopSession } from '../../src/workshop/workshop-session.ts'

/** Hires `def` from `session` with `task` (settlement `review` unless told) and waits for it. */
export async function hireOne(
  session: WorkshopSession,
  def: { readonly id: string } & Record<string, unknown>,
  task: unknown,
  settlement = 'review',
): Promise<{ id: string; outcome: RunOutcome }> {
  const agents = session.context().agents
  assert.ok(agents !== undefined, 'the session hires agents')
  const id = await agents.hire({
    agent: def.id,
    roster: { content: { agents: [def] }, source: 'test' },
    task,
    settlement,
  })
  return { id, outcome: await agents.result(id) }
}
