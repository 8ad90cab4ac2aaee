import assert from 'node:assert/strict'
import fsSync from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { writeDurablyAsync } from './durable-file.ts'
import { linesFixture } from './test-lines.ts'

describe('fork records written off the thread', () => {
  it('writes a file whole and leaves no temporary beside it', async (t) => {
    const { base } = await linesFixture(t)
    const file = path.join(base, 'deep', 'record.json')
    await writeDurablyAsync(file, { a: 1 })
    await writeDurablyAsync(file, { a: 2 })
    assert.deepEqual(JSON.parse(await fs.readFile(file, 'utf8')), { a: 2 })
    assert.deepEqual(await fs.readdir(path.dirname(file)), ['record.json'])
  })

  it('syncs the records of forks made and discarded at once together, not one after another', async (t) => {
    const { lines } = await linesFixture(t, { 'a.txt': 'a\n' })
    let inFlight = 0
    let peak = 0
    const open = fs.open
    t.mock.method(fs, 'open', async (file: string, ...rest: unknown[]) => {
      const handle = await (open as (...args: unknown[]) => Promise<fs.FileHandle>)(file, ...rest)
      if (!file.endsWith('.tmp')) return handle
      inFlight += 1
      peak = Math.max(peak, inFlight)
      const sync = handle.sync.bind(handle)
      // A slow disk's sync (this one's may end before the next fork's turn in the queue).
      handle.sync = async () => {
        await sync()
        await new Promise((resolve) => setTimeout(resolve, 30))
      }
      const close = handle.close.bind(handle)
      handle.close = async () => {
        inFlight -= 1
        await close()
      }
      return handle
    })
    const forks = await Promise.all(
      Array.from({ length: 8 }, (_, index) => lines.fork({ name: `at-once-${index}` })),
    )
    assert.ok(peak > 1, `fork records written one at a time (at most ${peak} at once)`)
    peak = 0
    await Promise.all(forks.map((fork) => lines.discard(fork.id)))
    assert.ok(peak > 1, `discard records written one at a time (at most ${peak} at once)`)
    assert.deepEqual(lines.forks(), [])
  })

  it('has a discard’s record on disk before its reference goes, and refuses other doors meanwhile', async (t) => {
    const { lines, stateDir } = await linesFixture(t, { 'a.txt': 'a\n' })
    const fork = await lines.fork({ name: 'going' })
    const record = path.join(stateDir, 'forks', fork.id, 'fork.json')
    const seen: unknown[] = []
    const deleteRef = lines.history.deleteRef.bind(lines.history)
    t.mock.method(lines.history, 'deleteRef', async (ref: string) => {
      seen.push(JSON.parse(fsSync.readFileSync(record, 'utf8')).discarded?.changes)
      // (Inside the queue here: only doors that refuse before waiting on it are asked.)
      await assert.rejects(lines.discard(fork.id), { code: 'not_found' })
      await assert.rejects(lines.merge(fork.id), { code: 'not_found' })
      return deleteRef(ref)
    })
    await lines.discard(fork.id)
    assert.deepEqual(seen, [0], 'the record said discarded when the reference went')
  })

  it('takes the name of a fork whose record is being written, and keeps its parent', async (t) => {
    const { lines } = await linesFixture(t)
    const parent = await lines.fork({ name: 'parent' })
    const forming = lines.fork({ from: parent.id, name: 'twin' })
    await assert.rejects(lines.fork({ name: 'twin' }), { message: /already named twin/ })
    await assert.rejects(lines.discard(parent.id), { message: /has forks of its own \(twin\)/ })
    const child = await forming
    await lines.discard(child.id)
    await lines.discard(parent.id)
  })
})
