/**
 * `eitri run` and `eitri runs show` on llm agents, through the real `eitri` process against a
 * fake model API on loopback (an openai-compatible provider in a temporary configuration, no
 * key, no network): a model that writes a file and answers, a budget too small for its second
 * call, the trace printed afterwards, and a model with no price refused at hire.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { runEitri } from './helpers/eitri-process.ts'
import { runsOf, writeModelConfig } from './helpers/llm-cli-setup.ts'
import { startModelWireServer, type WireReply } from './helpers/model-wire-server.ts'
import { makeScratch } from './helpers/scratch.ts'

const WRITE: WireReply = {
  kind: 'tool-call',
  name: 'write_file',
  input: { path: 'hello.txt', content: 'hello from the model\n' },
  usage: { input: 120, output: 30 },
}

describe('eitri run with an llm agent', () => {
  it('runs the model loop: the tool call lands in main, the answer on stdout, the steps and dollars on stderr; runs show prints the trace', async () => {
    await using server = await startModelWireServer([
      WRITE,
      { kind: 'text', text: 'I wrote hello.txt.', usage: { input: 200, output: 10 } },
    ])
    await using scratch = await makeScratch()
    const { flags, url } = await writeModelConfig(scratch, server.openaiURL)
    const run = await runEitri([
      'run',
      '--agent',
      'writer',
      '--task',
      'write hello.txt',
      '--yes',
      ...flags,
    ])
    assert.equal(run.status, 0, run.stderr)
    assert.equal(run.stdout, 'I wrote hello.txt.\n', run.stderr)
    assert.equal(
      await fs.readFile(path.join(scratch.workspace, 'hello.txt'), 'utf8'),
      'hello from the model\n',
    )
    const [row] = await runsOf(url)
    assert.ok(row !== undefined)
    assert.deepEqual([row.status, row.settlementStatus], ['completed', 'merged'])
    assert.match(run.stderr, /step 1: 120 in \+ 30 out tokens, \$0\.00018, 1 tool call/)
    assert.match(run.stderr, /tool write_file \{"path":"hello\.txt"/)
    assert.match(run.stderr, /tool write_file → success/)
    assert.match(
      run.stderr,
      /step 2: 200 in \+ 10 out tokens, \$0\.00022, answered \(so far: 2 steps, 360 tokens, \$0\.0004\)/,
    )
    assert.equal(server.requests.length, 2)

    const show = await runEitri(['runs', 'show', row.id, ...flags])
    assert.equal(show.status, 0, show.stderr)
    assert.match(show.stdout, /Model: local:stub-1/)
    assert.match(
      show.stdout,
      /Usage: 2 steps, 320 input tokens \(0 cached\), 40 output tokens, \$0\.0004/,
    )
    assert.match(
      show.stdout,
      /Trace:\n\[1\] system\n {4}You are a model running as an agent[^]*\n {4}You write files when asked\.\n\[2\] user/,
    )
    assert.match(show.stdout, /\[2\] user\n {4}[^\n]*write hello\.txt/)
    assert.match(show.stdout, /\[3\] assistant\n {4}→ write_file \{"path":"hello\.txt"/)
    assert.match(show.stdout, /\[4\] tool\n {4}← write_file: Wrote \d+ bytes to hello\.txt/)
    assert.match(show.stdout, /\[5\] assistant\n {4}I wrote hello\.txt\./)
  })

  it('ends waiting (budget-exhausted, exit 3) when the second call cannot be paid, the fork kept for review', async () => {
    // The first call (reserved at about $0.0083: its prompt and 4,096 output tokens at $2 a
    // million) reports 12,000 input tokens ($0.012): the $0.0055 left cannot reserve the second.
    await using server = await startModelWireServer([
      { ...WRITE, usage: { input: 12_000, output: 10 } },
    ])
    await using scratch = await makeScratch()
    const { flags, url } = await writeModelConfig(scratch, server.openaiURL, {
      budgetDollars: 0.0175,
    })
    const run = await runEitri([
      'run',
      '--agent',
      'writer',
      '--task',
      'write hello.txt',
      '--yes',
      ...flags,
    ])
    assert.equal(run.status, 3, run.stderr)
    assert.equal(run.stdout, '')
    assert.equal(server.requests.length, 1, 'no second model call')
    const [row] = await runsOf(url)
    assert.ok(row !== undefined)
    assert.deepEqual(
      [row.status, row.reason, row.settlementStatus],
      ['waiting', 'budget-exhausted', 'review'],
    )
    assert.match(run.stderr, /is waiting: budget-exhausted/)
    assert.match(run.stderr, new RegExp(`kept for review .*its changes are in fork ${row.world}`))
    await assert.rejects(fs.access(path.join(scratch.workspace, 'hello.txt')), 'main is untouched')
  })

  it('without a terminal and without --yes keeps the changes for review, saying why and how not to ask', async () => {
    await using server = await startModelWireServer([
      WRITE,
      { kind: 'text', text: 'I wrote hello.txt.' },
    ])
    await using scratch = await makeScratch()
    const { flags, url } = await writeModelConfig(scratch, server.openaiURL)
    const run = await runEitri(['run', '--agent', 'writer', '--task', 'write hello.txt', ...flags])
    assert.equal(run.status, 0, run.stderr)
    const [row] = await runsOf(url)
    assert.equal(row?.settlementStatus, 'review')
    assert.match(
      run.stderr,
      /kept for review \(approval-unavailable: no person could be asked \(no terminal to ask on: stdin is not a terminal\)\): its changes are in fork/,
    )
    assert.match(
      run.stderr,
      /`eitri run \.\.\. --yes` merges the changes into main without asking\.\n$/,
    )
    await assert.rejects(fs.access(path.join(scratch.workspace, 'hello.txt')), 'main is untouched')
  })

  it('refuses at hire a model with no price under a dollar budget, naming the fix; no Run is admitted', async () => {
    await using server = await startModelWireServer([])
    await using scratch = await makeScratch()
    const { flags, url } = await writeModelConfig(scratch, server.openaiURL)
    const run = await runEitri(['run', '--agent', 'unpriced', '--task', 'anything', ...flags])
    assert.notEqual(run.status, 0)
    assert.match(run.stderr, /Hire refused, no Run admitted: model local:free-1 has no known price/)
    assert.match(run.stderr, /"prices": \{"local:free-1": \{"input": 1, "output": 2\}\}/)
    assert.deepEqual(await runsOf(url), [])
    assert.equal(server.requests.length, 0)
  })
})
