/**
 * A model Run that calls a read-only tool commits no intent before it: the model call's
 * result, the read-only call's intent and result and the next model call's intent are one
 * commit. Killed with SIGKILL at either point, the next process ends the Run `unknown-outcome`
 * and re-runs nothing:
 * - killed during the next model call (the real `eitri run`, `read_file`, a fake model API on
 *   loopback holding that call open), the journal ends on that call's intent, the read-only
 *   call's records before it, and the model is not called a third time;
 * - killed while the read-only call runs (a process hiring a Run whose read-only tool never
 *   returns), the journal ends on the first model call's intent: the call that answered is
 *   reported as of unknown outcome, as its answer was not yet on disk.
 * The controls are the same Runs left alone: they complete.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { describe, it } from 'node:test'
import { openStore } from '../src/store/open-store.ts'
import { UNKNOWN_OUTCOME_REASON } from '../src/store/run-record.ts'
import {
  SHORT_LEASES,
  assertUnknownModelCall,
  killLeftover,
  runningJournal,
  settledRun,
  startRun,
} from './helpers/killed-run.ts'
import { startModelWireServer, type WireReply } from './helpers/model-wire-server.ts'
import { makeScratch } from './helpers/scratch.ts'
import { writeModelConfig } from './helpers/llm-cli-setup.ts'

const READER = {
  id: 'reader',
  prompt: 'You read files when asked.',
  tools: ['read_file', 'write_file'],
  access: 'workspace-write',
  modelPolicy: { provider: 'local', model: 'stub-1' },
  program: { kind: 'llm', budgetDollars: 1 },
}

const CHILD = new URL('./fixtures/read-only-tool-run.ts', import.meta.url)

/** The journal's event types, heartbeats left out. */
function typesOf(journal: readonly { readonly type: string }[]): string[] {
  return journal.map((event) => event.type)
}

describe('a model Run killed in the model call after a read-only tool call', () => {
  for (const killed of [true, false]) {
    it(
      killed
        ? 'is unknown-outcome, its journal ending on that intent with the read-only call committed with it, and the model is not called again'
        : 'control: left alone, the same Run reads the file and completes on two model calls',
      async () => {
        const replies: WireReply[] = [
          { kind: 'tool-call', name: 'read_file', input: { path: 'README.md' } },
          killed
            ? { kind: 'hold' }
            : { kind: 'text', text: 'It is a project.', usage: { input: 50, output: 5 } },
        ]
        await using server = await startModelWireServer(replies)
        await using scratch = await makeScratch({ 'README.md': '# project\n' })
        const { flags, url } = await writeModelConfig(scratch, server.openaiURL, {
          extra: {
            agents: [READER],
            runs: SHORT_LEASES,
          },
        })
        const { child, ended } = startRun('reader', 'read it', flags)
        try {
          if (killed) {
            await server.received(2)
            const journal = await runningJournal(url)
            // The model's answer, the read-only call and the next intent, written together.
            assert.deepEqual(typesOf(journal.slice(-5)), [
              'model-call-intent',
              'model-call-result',
              'tool-call-intent',
              'tool-call-result',
              'model-call-intent',
            ])
            assert.equal(new Set(journal.slice(-4).map((event) => event.time)).size, 1)
            child.kill('SIGKILL')
          }
          const run = await ended
          if (killed) assert.equal(child.signalCode, 'SIGKILL', run.stderr)
          else {
            assert.equal(run.status, 0, run.stderr)
            assert.equal(run.stdout, 'It is a project.\n')
          }
        } finally {
          killLeftover(child)
        }
        // Past the dead owner's lease, a new process on the same state sweeps.
        const { row, journal } = await settledRun(url, flags, killed)
        const types = typesOf(journal)
        if (killed) {
          assertUnknownModelCall(row)
          assert.deepEqual(types.slice(-6), [
            'model-call-intent',
            'model-call-result',
            'tool-call-intent',
            'tool-call-result',
            'model-call-intent',
            'finished',
          ])
        } else assert.equal(row.status, 'completed')
        assert.equal(server.requests.length, 2, 'two model calls, the second never re-run')
      },
    )
  }
})

describe('a model Run killed while its read-only tool call runs', () => {
  for (const killed of [true, false]) {
    it(
      killed
        ? 'is unknown-outcome on the model call before it: nothing of the answer or the read-only call was on disk'
        : 'control: a read-only call that returns lets the same Run complete',
      async () => {
        const child = spawn(
          process.execPath,
          ['--disable-warning=ExperimentalWarning', CHILD.pathname, killed ? 'block' : 'return'],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        )
        let stderr = ''
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
        const exited = once(child, 'exit')
        let url: string | undefined
        const lines: string[] = []
        try {
          for await (const line of createInterface({ input: child.stdout })) {
            lines.push(line)
            if (line.startsWith('store ')) url = line.slice('store '.length)
            if (line === 'reading' && killed) {
              // The tool runs on the model call's intent: nothing was committed for it.
              assert.equal((await runningJournal(url as string)).at(-1)?.type, 'model-call-intent')
              child.kill('SIGKILL')
            }
          }
          await exited
        } finally {
          killLeftover(child)
        }
        assert.ok(url !== undefined, stderr)
        // The child's fixture folder holds the store; the child never cleans it up.
        const folder = path.dirname(url.slice('sqlite:'.length))
        await using _cleanup = {
          [Symbol.asyncDispose]: () => fs.rm(folder, { recursive: true, force: true }),
        }
        await using store = await openStore(url)
        if (!killed) {
          assert.deepEqual(lines.slice(1), ['reading', 'ended completed'], stderr)
          return
        }
        assert.equal(child.signalCode, 'SIGKILL', stderr)
        // The Run held no lease: a sweep that takes every unleased Run ends it.
        const swept = await store.sweepInterruptedRuns({ unleasedAfterMs: 0 })
        assert.equal(swept.length, 1)
        const [row] = swept
        assert.deepEqual([row?.status, row?.reason], ['failed', UNKNOWN_OUTCOME_REASON])
        const types = typesOf(await store.listRunEvents((row as { id: string }).id))
        assert.deepEqual(types.slice(-2), ['model-call-intent', 'finished'], types.join(', '))
        assert.equal(types.filter((type) => type.startsWith('tool-call')).length, 0)
        assert.equal(types.includes('model-call-result'), false)
      },
    )
  }
})
