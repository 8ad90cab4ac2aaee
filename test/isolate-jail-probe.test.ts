/**
 * Under --isolate every session works on a fork of its own, with a jail of its own: the
 * availability probe (a cold bubblewrap) runs once per process, also when the sessions' jails
 * ask at once (clients listing the tools together), as ARCHITECTURE.md says of the probe.
 * Alone in its file: the count starts where no jail of this process has probed yet.
 */
import assert from 'node:assert/strict'
import { it } from 'node:test'
import { jailProbesStarted } from '../src/jail/availability-probe.ts'
import { openWorkshop } from '../src/workshop/workshop.ts'
import { makeScratch } from './helpers/scratch.ts'

it('isolated sessions probe the jail once between them, at once or one after another', async () => {
  await using scratch = await makeScratch({ 'a.txt': 'main\n' })
  await using workshop = await openWorkshop({
    workspace: scratch.workspace,
    stateDir: scratch.stateDir,
    configPath: scratch.configPath,
  })
  const open = (name: string) =>
    workshop.openSession({
      principal: { id: `connection-${name}`, seesEveryFork: false },
      isolate: true,
      label: name,
    })
  const before = jailProbesStarted()
  const together = await Promise.all(['a', 'b', 'c'].map(open))
  const answers = await Promise.all(
    together.map(async (session) => session.context().programs?.availability()),
  )
  for (const answer of answers)
    assert.ok(
      answer?.available,
      `install bubblewrap: apt-get install bubblewrap (${JSON.stringify(answer)})`,
    )
  assert.equal(
    new Set(together.map((session) => session.lines.current)).size,
    3,
    'each session has a fork of its own',
  )
  await using later = await open('d')
  assert.ok((await later.context().programs?.availability())?.available)
  const result = await workshop.toolset.run(
    { name: 'shell', input: { command: 'cat a.txt' } },
    later.context(),
  )
  assert.equal(result.type, 'success', result.content)
  assert.equal(jailProbesStarted() - before, 1, 'one probe bubblewrap for every fork')
  for (const session of together) await session.close()
})
