/**
 * A command that exits non-zero shows as failed, with its exit status, where a person watches a
 * model Run: `eitri run`'s live view and `eitri runs show`, through the real `eitri` process, the
 * real shell tool and jail, and a fake model API on loopback.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { eventText } from '../src/cli/run-trace-text.ts'
import { runEitri } from './helpers/eitri-process.ts'
import { runsOf, writeModelConfig } from './helpers/llm-cli-setup.ts'
import { startModelWireServer } from './helpers/model-wire-server.ts'
import { makeScratch } from './helpers/scratch.ts'

describe('a shell call in a model Run', () => {
  it('shows a non-zero exit as failed (exit N) live and in runs show; exit 0 as success', async () => {
    await using server = await startModelWireServer([
      {
        kind: 'tool-call',
        name: 'shell',
        input: { command: 'ls no-such-file' },
        usage: { input: 100, output: 10 },
      },
      // The control: a command that succeeds shows as a success.
      {
        kind: 'tool-call',
        name: 'shell',
        input: { command: 'true' },
        usage: { input: 110, output: 10 },
      },
      { kind: 'text', text: 'The file is not there.', usage: { input: 120, output: 10 } },
    ])
    await using scratch = await makeScratch()
    const { flags, url } = await writeModelConfig(scratch, server.openaiURL, {
      extra: {
        agents: [
          {
            id: 'sheller',
            prompt: 'You run commands when asked.',
            tools: ['shell'],
            access: 'workspace-write',
            modelPolicy: { provider: 'local', model: 'stub-1' },
            program: { kind: 'llm', budgetDollars: 1 },
          },
        ],
      },
    })
    const run = await runEitri(['run', '--agent', 'sheller', '--task', 'look', '--yes', ...flags])
    assert.equal(run.status, 0, run.stderr)
    assert.match(run.stderr, /tool shell → failed \(exit 2\)/)
    assert.match(run.stderr, /tool shell → success \(exit 0\)/)
    const [row] = await runsOf(url)
    assert.ok(row !== undefined)
    const show = await runEitri(['runs', 'show', row.id, ...flags])
    assert.equal(show.status, 0, show.stderr)
    assert.match(show.stdout, /tool-call-result shell → failed \(exit 2\) \{[^\n]*"exitCode":2/)
    assert.match(show.stdout, /tool-call-result shell → success \(exit 0\)/)
    // Dollar figures are shown to the micro-dollar, never with floating-point noise.
    assert.match(show.stdout, /"reservedDollars":0\.\d{1,6}[,}]/)
    assert.doesNotMatch(show.stdout, /Dollars":\d+\.\d{7,}|"dollars":\d+\.\d{7,}/)
  })

  it('prints an event with its dollar figures rounded, the stored value untouched', () => {
    const data = { step: 0, reservedDollars: 0.0018463000000000002, dollars: 1e-7 * 3 }
    assert.equal(
      eventText('model-call-intent', data),
      'model-call-intent {"step":0,"reservedDollars":0.001846,"dollars":0}',
    )
    assert.equal(data.reservedDollars, 0.0018463000000000002)
    assert.equal(
      eventText('tool-call-result', {
        name: 'shell',
        type: 'error',
        code: 'timeout',
        exitCode: 124,
      }),
      'tool-call-result shell → error timeout (exit 124) {"name":"shell","type":"error","code":"timeout","exitCode":124}',
    )
  })
})
