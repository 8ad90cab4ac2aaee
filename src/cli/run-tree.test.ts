import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openStore } from '../store/open-store.ts'
import { watchRunTree } from './run-tree.ts'

describe('watchRunTree', () => {
  it('writes a line per change without a terminal, children under their parent', async () => {
    await using store = await openStore('sqlite::memory:')
    await store.admitRun({ id: 'root', agentId: 'lead' })
    const written: string[] = []
    const view = watchRunTree({
      store,
      rootId: 'root',
      write: (text) => written.push(text),
      redraw: false,
      pollMs: 5,
    })
    await new Promise((resolve) => setTimeout(resolve, 30))
    await store.admitRun({ id: 'kid', agentId: 'helper', parentId: 'root' })
    await new Promise((resolve) => setTimeout(resolve, 30))
    await store.finishRun('kid', { status: 'completed', value: 1 })
    await store.finishRun('root', { status: 'completed', value: 2 })
    await view.stop()
    assert.deepEqual(written, [
      'eitri: lead root running\n',
      'eitri:   helper kid running\n',
      'eitri: lead root completed\n',
      'eitri:   helper kid completed\n',
    ])
  })

  it('redraws in place on a terminal, and not while a person is asked', async () => {
    await using store = await openStore('sqlite::memory:')
    await store.admitRun({ id: 'root', agentId: 'lead' })
    const written: string[] = []
    const view = watchRunTree({
      store,
      rootId: 'root',
      write: (text) => written.push(text),
      redraw: true,
      pollMs: 5,
    })
    await new Promise((resolve) => setTimeout(resolve, 30))
    view.hold()
    await store.admitRun({ id: 'kid', agentId: 'helper', parentId: 'root' })
    await new Promise((resolve) => setTimeout(resolve, 30))
    assert.deepEqual(written, ['lead root running\n'])
    view.release()
    await new Promise((resolve) => setTimeout(resolve, 30))
    await store.finishRun('kid', { status: 'completed', value: 1 })
    await view.stop()
    assert.deepEqual(written, [
      'lead root running\n',
      // After a question, a fresh tree under it: nothing is erased above.
      'lead root running\n  helper kid running\n',
      // The view's own cursor moves, apart from the text (which the CLI shows escaped).
      '\x1b[2A\r\x1b[J',
      'lead root running\n  helper kid completed\n',
    ])
  })
})
