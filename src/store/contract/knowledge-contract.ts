/**
 * @module store/contract/knowledge-contract
 * The contract of `store.knowledge(line)`: upsert by title, `[[links]]`, ranked search.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { freshStore, type StoreHarness } from './store-harness.ts'
import { rejectsWith } from './task-contract.ts'

/** Entries on clearly separate topics, for search cases whose answer is not in doubt. */
export const TOPIC_ENTRIES = [
  {
    title: 'SQLite',
    body: 'An embedded database in a single file. eitri keeps its store in SQLite by default, with write-ahead logging for durability.',
  },
  {
    title: 'PostgreSQL',
    body: 'A database server. Several machines share one PostgreSQL database; workers claim runs with row locks.',
  },
  {
    title: 'Bubblewrap',
    body: 'The jail: unprivileged namespaces confine every shell command. No network inside.',
  },
  {
    title: 'Kittens',
    body: 'Small cats. They sleep most of the day and chase string.',
  },
  {
    title: 'Gardening notes',
    body: 'Tomatoes need sun; basil grows well beside them. Water in the morning.',
  },
]

/** Registers the knowledge contract. */
export function knowledgeContract(harness: StoreHarness): void {
  void describe('knowledge', () => {
    void it('upserts by title, ignoring case and spacing, and keeps the first creation time', async () => {
      await using store = (await freshStore(harness)).store
      const knowledge = store.knowledge('main')
      const first = await knowledge.add({ title: 'Store  design', body: 'one' })
      assert.equal(first.created, true)
      assert.equal(first.entry.title, 'Store design')
      const second = await knowledge.add({ title: ' store DESIGN ', body: 'two' })
      assert.equal(second.created, false)
      assert.equal(second.entry.title, 'store DESIGN')
      assert.equal(second.entry.createdAt, first.entry.createdAt)
      assert.ok(second.entry.updatedAt > first.entry.updatedAt)
      assert.deepEqual(await knowledge.get('STORE DESIGN'), second.entry)
      assert.equal(await knowledge.get('nothing'), undefined)
      await rejectsWith(knowledge.add({ title: '  ', body: 'x' }), 'invalid_input')
      await rejectsWith(knowledge.add({ title: 'x'.repeat(301), body: 'x' }), 'invalid_input')
    })

    void it('turns [[mentions]] into links out and back', async () => {
      await using store = (await freshStore(harness)).store
      const knowledge = store.knowledge('main')
      const { entry } = await knowledge.add({
        title: 'Store',
        body: 'Kept in [[SQLite]] or [[PostgreSQL|a server]]; see [[sqlite]] again, and [[Store]] itself.',
      })
      assert.deepEqual(entry.links, ['SQLite', 'PostgreSQL'])
      await knowledge.add({ title: 'SQLite', body: 'A file. Used by [[Store]].' })
      await knowledge.add({ title: 'Jail', body: 'Nothing to do with [[store]].' })
      assert.deepEqual(await knowledge.links('store'), {
        title: 'Store',
        exists: true,
        out: [
          { title: 'SQLite', exists: true },
          { title: 'PostgreSQL', exists: false },
        ],
        back: ['Jail', 'SQLite'],
      })
      assert.deepEqual(await knowledge.links('PostgreSQL'), {
        title: 'PostgreSQL',
        exists: false,
        out: [],
        back: ['Store'],
      })
      // Replacing a body replaces its links.
      await knowledge.add({ title: 'Jail', body: 'Bubblewrap only.' })
      assert.deepEqual((await knowledge.links('Store')).back, ['SQLite'])
    })

    void it('ranks the relevant entries first, with marked snippets', async () => {
      await using store = (await freshStore(harness)).store
      const knowledge = store.knowledge('main')
      await knowledge.addMany(TOPIC_ENTRIES)
      const database = await knowledge.search('database')
      assert.deepEqual(new Set(database.map((hit) => hit.title)), new Set(['SQLite', 'PostgreSQL']))
      const durable = await knowledge.search('durability of the embedded file')
      assert.equal(durable[0]?.title, 'SQLite')
      assert.match(durable[0]?.snippet ?? '', /«(embedded|durability|file)»/i)
      const cats = await knowledge.search('cats sleeping')
      assert.equal(cats[0]?.title, 'Kittens')
      assert.ok(cats.every((hit) => typeof hit.score === 'number' && Number.isFinite(hit.score)))
      const jail = await knowledge.search('shell commands in namespaces')
      assert.equal(jail[0]?.title, 'Bubblewrap')
      // A title match outranks a passing mention in a body.
      await knowledge.add({ title: 'Tomatoes', body: 'A red fruit.' })
      assert.equal((await knowledge.search('tomatoes'))[0]?.title, 'Tomatoes')
      assert.equal((await knowledge.search('database', { limit: 1 })).length, 1)
      assert.deepEqual(await knowledge.search('zeppelin'), [])
      assert.deepEqual(await knowledge.search('  !!! '), [])
      assert.deepEqual(await knowledge.search('"the AND (OR NEAR'), [], 'stop words match nothing')
      assert.equal((await knowledge.search('"string" AND (cats')).at(0)?.title, 'Kittens')
      await rejectsWith(knowledge.search('x', { limit: 0 }), 'invalid_input')
      await rejectsWith(knowledge.search('x', { limit: 101 }), 'invalid_input')
    })

    void it("a hit's snippet is its own entry's text, never another line's or an older version's", async () => {
      await using store = (await freshStore(harness)).store
      // Written first, so each matches before the hit below in the search index.
      await store.forkLine('main', 'alice')
      await store.knowledge('alice').add({ title: 'Deploy', body: 'the password is hunter2' })
      const main = store.knowledge('main')
      await main.add({ title: 'Plan', body: 'an old password, replaced' })
      await main.add({ title: 'Plan', body: 'a new password' })
      await store.forkLine('main', 'bob')
      const bob = store.knowledge('bob')
      await bob.add({ title: 'Mine', body: 'my password notes' })
      const hits = await bob.search('password')
      const snippets = new Map(hits.map((hit) => [hit.title, hit.snippet]))
      assert.deepEqual([...snippets.keys()].sort(), ['Mine', 'Plan'])
      assert.match(snippets.get('Mine') ?? '', /my «password» notes/)
      assert.match(snippets.get('Plan') ?? '', /a new «password»/)
      assert.ok(
        hits.every((hit) => !/hunter2|old/.test(hit.snippet)),
        JSON.stringify(hits),
      )
    })

    void it("the order of a line's hits says nothing of what other lines hold", async () => {
      await using store = (await freshStore(harness)).store
      // Another line's entries, and an old version of main's, all holding one word.
      await store.forkLine('main', 'alice')
      const alice = store.knowledge('alice')
      for (const n of [1, 2, 3, 4]) {
        await alice.add({ title: `Deploy ${n}`, body: `the password is swordfish ${n}` })
      }
      await store.knowledge('main').add({ title: 'Old', body: 'swordfish once' })
      await store.knowledge('main').add({ title: 'Old', body: 'nothing now' })
      await store.forkLine('main', 'bob')
      const bob = store.knowledge('bob')
      // Two entries alike but for one word each: alice's word, and one nobody else has.
      await bob.add({ title: 'Note one', body: 'a note on swordfish' })
      await bob.add({ title: 'Note two', body: 'a note on marlinfish' })
      const hits = await bob.search('swordfish marlinfish')
      assert.deepEqual(
        hits.map((hit) => hit.title),
        ['Note one', 'Note two'],
      )
      assert.equal(hits[0]?.score, hits[1]?.score)
    })

    void it('searches the latest version of each entry only', async () => {
      await using store = (await freshStore(harness)).store
      const knowledge = store.knowledge('main')
      await knowledge.add({ title: 'Plan', body: 'We will use zeppelins.' })
      await knowledge.add({ title: 'Plan', body: 'We will use trains.' })
      assert.deepEqual(await knowledge.search('zeppelins'), [])
      assert.deepEqual(
        (await knowledge.search('trains')).map((hit) => hit.title),
        ['Plan'],
      )
    })
  })
}
