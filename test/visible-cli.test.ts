/**
 * What the `eitri` CLI prints for a person shows terminal controls as escapes, through the real
 * `eitri` process: a model's text in `eitri run` and in a Run's trace (`eitri runs show`), a
 * file's content in `eitri diff`, a task's title from `eitri call` and a program's output from
 * `eitri exec`, each carrying an escape sequence that would erase the line and write another
 * over it. With `--json` the output stays exact data.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { runEitri } from './helpers/eitri-process.ts'
import { runsOf, writeModelConfig } from './helpers/llm-cli-setup.ts'
import { startModelWireServer } from './helpers/model-wire-server.ts'
import { makeScratch } from './helpers/scratch.ts'

/** Erases the line and returns to its start: what follows is all a terminal would show. */
const HIDE = '\u001b[2K\r'
/** What a person sees instead of HIDE. */
const SHOWN = '\\x1b[2K\\r'

describe('the CLI shows control characters as escapes', () => {
  it('in eitri run and in the trace of eitri runs show', async () => {
    await using server = await startModelWireServer([
      {
        kind: 'tool-call',
        name: 'write_file',
        input: { path: 'evil.txt', content: `rm -rf ~${HIDE}harmless\n` },
      },
      { kind: 'text', text: `I deleted everything.${HIDE}All tests pass.` },
    ])
    await using scratch = await makeScratch()
    const { flags, url } = await writeModelConfig(scratch, server.openaiURL)
    const run = await runEitri(['run', '--agent', 'writer', '--task', 'tidy up', ...flags])
    assert.equal(run.status, 0, run.stderr)
    assert.equal(run.stdout, `I deleted everything.${SHOWN}All tests pass.\n`)
    assert.ok(!run.stderr.includes('\u001b'), run.stderr)
    const [row] = await runsOf(url)
    assert.ok(row !== undefined)

    const show = await runEitri(['runs', 'show', row.id, ...flags])
    assert.equal(show.status, 0, show.stderr)
    assert.ok(!show.stdout.includes('\u001b'), 'no raw escape in the trace')
    assert.ok(!show.stdout.includes('\r'), 'no raw carriage return in the trace')
    assert.match(show.stdout, /\[5\] assistant\n {4}I deleted everything\.\\x1b\[2K\\rAll tests/)

    // The Run's changes wait for review (no terminal, no --yes): the diff a person reads.
    assert.equal(row.settlementStatus, 'review')
    const diff = await runEitri(['diff', row.world as string, ...flags])
    assert.equal(diff.status, 0, diff.stderr)
    assert.ok(!diff.stdout.includes('\u001b'), diff.stdout)
    assert.ok(diff.stdout.includes(`+rm -rf ~${SHOWN}harmless`), diff.stdout)

    const json = await runEitri(['runs', 'show', row.id, '--json', ...flags])
    assert.equal(json.status, 0, json.stderr)
    const { run: exact } = JSON.parse(json.stdout) as { run: { output: string } }
    assert.equal(exact.output, `I deleted everything.${HIDE}All tests pass.`)
  })

  it('in a task’s title from eitri call and a program’s output from eitri exec', async () => {
    await using scratch = await makeScratch()
    const title = `Ship it${HIDE}Review the security fix`
    const created = await runEitri([
      'call',
      'task_create',
      JSON.stringify({ title }),
      ...scratch.flags,
    ])
    assert.equal(created.status, 0, created.stderr)
    const tasks = await runEitri(['call', 'task_list', '{}', ...scratch.flags])
    assert.equal(tasks.status, 0, tasks.stderr)
    assert.ok(!tasks.stdout.includes('\u001b'), tasks.stdout)
    assert.ok(tasks.stdout.includes(`Ship it${SHOWN}Review the security fix`), tasks.stdout)
    const exact = await runEitri(['call', 'task_list', '{}', '--json', ...scratch.flags])
    const { content } = JSON.parse(exact.stdout) as { content: string }
    assert.ok(content.includes(title), 'the JSON keeps the exact title')

    const exec = await runEitri(['exec', ...scratch.flags, '--', 'printf', 'ok\\033[2K\\rfine'])
    assert.equal(exec.status, 0, exec.stderr)
    assert.equal(exec.stdout, `ok${SHOWN}fine`)
  })
})
