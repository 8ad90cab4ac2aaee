import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { NETWORK_NOTE } from '../../bubblewrap/network-note.ts'
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

  it('says, as the shell tool does, that a command failed for want of the network', async () => {
    await using fixture = await evalWorkshop()
    const availability = await fixture.workshop.jail.availability()
    assert.ok(availability.available, 'install bubblewrap (apt-get install bubblewrap)')
    const npm = (code: string) =>
      JSON.stringify(
        `echo "npm error code ${code}" >&2; echo "npm error request to https://registry.npmjs.org/x failed" >&2; exit 1`,
      )
    const offline = JSON.parse(
      evalValue(await fixture.run(`JSON.stringify(await shell.run(${npm('ENOTCACHED')}))`)),
    ) as { exitCode: number; note?: string }
    assert.equal(offline.exitCode, 1)
    assert.equal(offline.note, NETWORK_NOTE, "the shell tool's note, word for word")
    // Positive controls: another npm failure, and a success, get no note.
    for (const command of [npm('E404'), JSON.stringify('echo "npm error code ENOTCACHED"')]) {
      const other = JSON.parse(
        evalValue(await fixture.run(`JSON.stringify(await shell.run(${command}))`)),
      ) as { note?: string }
      assert.equal(other.note, undefined, command)
    }
  })
})
