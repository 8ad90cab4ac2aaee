/**
 * What one model step's write costs the SQLite log: the pages it adds are what the commit
 * writes and its sync flushes, on every step of every Run (decision 0025). A new index or
 * trigger on the journal, the chat or the metrics shows here first.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { openStore } from '../open-store.ts'

/** A frame of the log: a 24-byte header and one 4 KiB page. */
const FRAME_BYTES = 24 + 4096

describe("a model step's write in the SQLite log", () => {
  it('adds five pages: two of the journal, two of the chat, one of the metrics', async (t) => {
    const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-step-pages-'))
    t.after(() => fs.rm(folder, { recursive: true, force: true }))
    const file = path.join(folder, 'store.sqlite')
    await using store = await openStore(`sqlite:${file}`)
    await store.admitRun({ id: 'run-1', events: [{ type: 'trigger' }] })
    const step = (index: number) =>
      store.appendRunStep('run-1', {
        events: [
          { type: 'model-call-result', data: { step: index, toolCalls: 1 } },
          { type: 'tool-call-intent', data: { step: index, name: 'add', input: { a: index } } },
        ],
        chat: {
          chatId: 'chat-run-1',
          messages: [{ role: 'assistant', content: [{ type: 'text', text: `step ${index}` }] }],
        },
        metrics: {
          provider: 'local',
          model: 'stub-1',
          inputsId: 'sha256:abc',
          modelSteps: index + 1,
          inputTokens: 10,
          outputTokens: 4,
          cachedInputTokens: 0,
          dollars: 0,
          steps: [],
        },
      })
    await step(0)
    const pages: number[] = []
    for (let index = 1; index <= 5; index++) {
      const before = statSync(`${file}-wal`).size
      await step(index)
      pages.push((statSync(`${file}-wal`).size - before) / FRAME_BYTES)
    }
    assert.deepEqual(pages, [5, 5, 5, 5, 5])
  })
})
