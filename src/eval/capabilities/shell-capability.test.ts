import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { evalError, evalValue, evalWorkshop } from './test-eval-workshop.ts'

describe('the shell capability', () => {
  it('runs a command in the jail after the command policy, and refuses what the policy denies', async () => {
    await using fixture = await evalWorkshop({ files: { 'a.txt': 'alpha\n' } })
    const availability = await fixture.workshop.jail.availability()
    assert.ok(
      availability.available,
      availability.available
        ? ''
        : `install bubblewrap (apt-get install bubblewrap): ${availability.reason}`,
    )
    const result = await fixture.run(
      "const r = await shell.run('pwd; cat a.txt; exit 3'); JSON.stringify(r)",
    )
    assert.deepEqual(JSON.parse(evalValue(result)), {
      exitCode: 3,
      stdout: '/workspace\nalpha\n',
      stderr: '',
      timedOut: false,
    })
    assert.match(
      evalError(await fixture.run("await shell.run('sudo rm -rf /')"), 'eval_error'),
      /\[permission_denied\]: permit denied: sudo/,
    )
    assert.equal(
      evalValue(
        await fixture.run("JSON.stringify(await shell.run('sleep 5', { timeout_s: 0.2 }))"),
      ).includes('"timedOut":true'),
      true,
    )
  })
})
