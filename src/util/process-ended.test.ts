/** processEnded: a process is known to have ended only from its /proc entry's absence or start. */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { describe, it } from 'node:test'
import { processEnded, processStartTime } from './owned-folders.ts'

describe('processEnded', () => {
  const ownStart = processStartTime('self') as string

  it('answers no for a live process and yes for one that exited or whose pid names another start', () => {
    assert.equal(processEnded(process.pid, ownStart), false)
    assert.equal(processEnded(process.pid, `${ownStart}1`), true, 'the pid was reused')
    const exited = spawnSync('true')
    assert.equal(processEnded(exited.pid, '1'), true)
  })

  it('answers yes for a zombie', () => {
    const zombie = `${process.pid} (a (b) c) Z 1 ${Array.from({ length: 18 }, () => '0').join(' ')} ${ownStart} 0`
    assert.equal(
      processEnded(process.pid, ownStart, () => zombie),
      true,
    )
  })

  it('answers no when its entry cannot be read for another reason than its absence', () => {
    for (const code of ['EMFILE', 'EACCES', 'EIO']) {
      const unreadable = () => {
        throw Object.assign(new Error(code), { code })
      }
      assert.equal(processEnded(process.pid, ownStart, unreadable), false, code)
    }
  })
})
