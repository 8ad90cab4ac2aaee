import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  committedNotes,
  heardBeforeKill,
  heldNotesStore,
  insert,
  settled,
  tempFile,
} from './test-wal-store.ts'

describe('a write heard at its commit, synced with the next (deferSync)', () => {
  it('is heard with no sync of its own; the next synced write waits for a sync that covers it', async (t) => {
    const { file, syncs, driver } = await heldNotesStore(t)
    // Positive control: an ordinary write is not heard while its sync is held.
    const ordinary = insert(driver, 'ordinary')
    await syncs.called(2)
    assert.equal(await settled(ordinary), false, 'an ordinary write heard before its sync')
    syncs.calls[1]?.finish()
    await ordinary

    const deferred = insert(driver, 'deferred', false, { deferSync: true })
    assert.equal(await settled(deferred), true, 'a deferred write waited for a sync')
    assert.equal(await deferred, 'deferred')
    assert.equal(syncs.calls.length, 2, 'a deferred write started a sync of its own')
    assert.deepEqual(committedNotes(file), ['ordinary', 'deferred'], 'it is committed')

    const next = insert(driver, 'next')
    await syncs.called(3)
    assert.equal(await settled(next), false, 'the next write heard before its sync')
    syncs.calls[2]?.finish()
    assert.equal(await next, 'next')
  })

  it('waits for the sync in a group with an ordinary write, and syncs at close what none waited for', async (t) => {
    const { syncs, driver } = await heldNotesStore(t)
    const both = [insert(driver, 'a', false, { deferSync: true }), insert(driver, 'b')]
    await syncs.called(2)
    assert.equal(await settled(both[0] as Promise<string>), false, 'heard before the group synced')
    syncs.calls[1]?.finish()
    assert.deepEqual(await Promise.all(both), ['a', 'b'])

    const last = insert(driver, 'last', false, { deferSync: true })
    assert.equal(await settled(last), true, 'a deferred write waited for a sync')
    assert.equal(syncs.calls.length, 2)
    const closing = driver.close()
    await syncs.called(3)
    assert.equal(await settled(closing), false, 'closed before syncing what none waited for')
    syncs.calls[2]?.finish()
    await closing
  })

  it('keeps what a writer heard of when the process is killed right after', async (t) => {
    const file = await tempFile(t)
    const heard = await heardBeforeKill(file, true)
    const rows = committedNotes(file)
    for (let j = 0; j < 20; j++) assert.ok(rows.includes(`${heard}-${j}`), `${heard}-${j} lost`)
  })
})
