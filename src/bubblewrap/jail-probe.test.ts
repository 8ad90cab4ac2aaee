import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { explainProbeFailure } from './jail-probe.ts'

describe('explainProbeFailure', () => {
  it('says bubblewrap is not installed, whether the spawn or a step before it found it missing', () => {
    for (const failure of [
      { spawnError: 'spawn bwrap ENOENT', exitCode: null, stderr: '' },
      {
        exitCode: 127,
        stderr: 'setpriv: failed to execute /nonexistent/bwrap: No such file or directory',
      },
    ]) {
      const answer = explainProbeFailure(failure)
      assert.equal(answer.available, false)
      assert.match(answer.available ? '' : answer.reason, /bubblewrap \(bwrap\) is not installed/)
    }
  })

  it('keeps another program missing apart from bubblewrap', () => {
    const answer = explainProbeFailure({
      exitCode: 127,
      stderr: 'setpriv: failed to execute /usr/bin/other: No such file or directory',
    })
    assert.equal(answer.available, false)
    assert.doesNotMatch(answer.available ? '' : answer.reason, /not installed/)
  })
})
