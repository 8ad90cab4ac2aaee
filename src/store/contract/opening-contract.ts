/**
 * @module store/contract/opening-contract
 * The contract of opening: migrations applied once, a newer schema refused.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MIGRATIONS } from '../migrations.ts'
import { openDriver, openStore } from '../open-store.ts'
import { migrate } from '../sql/migrate.ts'
import { freshStore, type StoreHarness } from './store-harness.ts'
import { rejectsWith } from './task-contract.ts'

/** Registers the opening contract. */
export function openingContract(harness: StoreHarness): void {
  void describe('opening', () => {
    void it('applies every migration once and records them', async () => {
      const { store, url } = await freshStore(harness)
      assert.equal(await store.schemaVersion(), MIGRATIONS.length)
      await store.tasks('main').create({ title: 'kept' })
      await store.close()
      await using again = await openStore(url)
      assert.equal(await again.schemaVersion(), MIGRATIONS.length)
      assert.equal((await again.tasks('main').list()).length, 1)
    })

    void it('refuses a database written by a newer eitri, saying what to do', async () => {
      const url = await harness.freshUrl()
      const driver = await openDriver(url)
      const future = { name: 'from-the-future', sqlite: [], postgres: [] }
      await migrate(driver, [...MIGRATIONS, future])
      await driver.close()
      const message = await rejectsWith(openStore(url), 'store_unavailable')
      assert.match(message, /newer eitri/)
      assert.match(message, new RegExp(`up to ${MIGRATIONS.length}`))
      assert.match(message, /Upgrade eitri/)
    })
  })
}
