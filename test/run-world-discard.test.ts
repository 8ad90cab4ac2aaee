/**
 * A Run's world is discarded with its children's worlds, never with a fork someone made from
 * it: a Run that fails (which its model can make happen at will) or is discarded after review
 * must not take a session's own work with it. Real workshop: git history, SQLite store.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openWorkshop } from '../src/workshop/workshop.ts'
import { runWorldName } from '../src/workspace/fork-owner.ts'
import { makeScratch } from './helpers/scratch.ts'

/** A Run that fails after `delayMs`, as a model Run stopped at its step bound would. */
const failing = (delayMs: number) => ({
  content: { agents: [{ id: 'failing', program: { kind: 'scripted', delayMs, fail: 'boom' } }] },
  source: 'test',
})

describe('discarding a Run’s world', () => {
  it('keeps a fork a session made from it, with its work, and says so', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'a' })
    await using workshop = await openWorkshop({
      workspace: scratch.workspace,
      stateDir: scratch.stateDir,
      configPath: scratch.configPath,
    })
    const session = await workshop.openSession()
    const agents = session.context().agents
    assert.ok(agents !== undefined)
    const call = (name: string, input: unknown) =>
      workshop.toolset.run({ name, input }, session.context())
    // Positive control: a failed Run's world goes when nothing was made from it.
    const plain = await agents.hire({ agent: 'failing', roster: failing(0), task: 'x' })
    const plainOutcome = await agents.result(plain)
    assert.equal(plainOutcome.settlementStatus, 'discarded')
    assert.equal(plainOutcome.settlementReason, 'failed')
    assert.ok(!workshop.lines.forks().some((fork) => fork.name === runWorldName(plain)))

    const id = await agents.hire({ agent: 'failing', roster: failing(2000), task: 'x' })
    const forked = await call('workspace_fork', { name: 'mine', from: runWorldName(id) })
    assert.equal(forked.type, 'success', forked.content)
    assert.equal((await call('workspace_use', { fork: 'mine' })).type, 'success')
    const wrote = await call('write_file', { path: 'work.txt', content: 'my work' })
    assert.equal(wrote.type, 'success', wrote.content)
    assert.equal((await call('workspace_use', { fork: 'main' })).type, 'success')
    const outcome = await agents.result(id)
    assert.equal(outcome.status, 'failed')
    assert.equal(outcome.settlementStatus, 'discarded')
    assert.match(
      outcome.settlementReason ?? '',
      /^failed; its world is kept for the fork made from it \(mine\)/,
    )
    const mine = workshop.lines.forks().find((fork) => fork.name === 'mine')
    assert.ok(mine !== undefined, 'the session’s fork is still there')
    const tree = await workshop.lines.tree(mine.id)
    assert.equal(Buffer.from(await tree.readFile('work.txt')).toString('utf8'), 'my work')
    await session.close()
  })
})
