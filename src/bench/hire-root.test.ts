/**
 * A bench's session must hire agents: one that cannot is refused by name, before anything is
 * hired or settled, never skipped.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { EitriError } from '../errors/eitri-error.ts'
import type { AgentRuns } from '../ports/agent-runs.ts'
import type { WorkshopSession } from '../workshop/workshop-session.ts'
import { hireRoot, sessionAgents } from './hire-root.ts'

/** A session whose context carries `agents` (or none); nothing else of it is used. */
function sessionWith(agents: AgentRuns | undefined): WorkshopSession {
  return { context: () => (agents === undefined ? {} : { agents }) } as unknown as WorkshopSession
}

describe('a bench session', () => {
  it('without agents is refused as not_available, naming what is missing', async () => {
    const refused = (error: unknown) =>
      error instanceof EitriError &&
      error.code === 'not_available' &&
      /hires no agents, so its root can be neither hired nor settled/.test(error.message)
    assert.throws(() => sessionAgents(sessionWith(undefined)), refused)
    await assert.rejects(
      hireRoot(sessionWith(undefined), { agent: { id: 'root' }, source: 'test', task: 'x' }),
      refused,
    )
  })

  it('control: with agents, its port is the one used', () => {
    const agents = { hire: () => Promise.resolve('run') } as unknown as AgentRuns
    assert.equal(sessionAgents(sessionWith(agents)), agents)
  })
})
