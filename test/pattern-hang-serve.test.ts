/**
 * A pattern a model writes never freezes `eitri serve`. picomatch turned each `*` into a
 * backtracking `[^/]*?`, so `*a*a…*ab` against one long name of `a`s ran for hours on the
 * server's one thread: every connection stopped, and no cancel could be read. Through a real
 * MCP client on a project of a few thousand files, the glob tool, grep's `glob` and js_eval's
 * `fs.glob` each answer, and the server answers the next call. Without the fix the first call
 * never returns and the test's own timeout fails it. Likewise a grep pattern that RE2 takes
 * minutes over on one large file is stopped at grep's deadline, mid-file, and says so.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { makeScratch, type Scratch } from './helpers/scratch.ts'
import { connectServe } from './helpers/serve-client.ts'

const GIT_ENV = {
  PATH: process.env['PATH'],
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
}

/** Thirty stars, each before an `a`, and a `b` no name has: 40^30 ways to fail by backtracking. */
const HANGING_GLOB = `${'*a'.repeat(30)}b`
const LONG_NAME = `${'a'.repeat(200)}.txt`

async function project(): Promise<Scratch> {
  const files: Record<string, string> = { [`notes/${LONG_NAME}`]: 'needle\n' }
  for (let folder = 0; folder < 40; folder++)
    for (let file = 0; file < 50; file++)
      files[`src/m${folder}/f${file}.ts`] = `export const v${file} = ${folder}\n`
  const scratch = await makeScratch(files)
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: scratch.workspace, env: GIT_ENV })
  git('init', '-q', '-b', 'main')
  git('add', '-A')
  git('-c', 'user.name=p', '-c', 'user.email=p@e', 'commit', '-q', '-m', 'first')
  return scratch
}

describe('glob patterns through eitri serve', { timeout: 240_000 }, () => {
  it('answers a backtracking-bomb glob in glob, grep and js_eval, and keeps serving', async () => {
    await using scratch = await project()
    const client = new Client({ name: 'pattern-hang-client', version: '1.0.0' })
    const call = await connectServe(client, scratch)
    try {
      // Control: a plain glob finds the long name, so the bomb below is matched against it.
      const control = await call('glob', { pattern: '**/a*a.txt' })
      assert.equal(control.text, `notes/${LONG_NAME}`)

      const globbed = await call('glob', { pattern: `**/${HANGING_GLOB}` })
      assert.equal(globbed.isError, false, globbed.text)
      assert.match(globbed.text, /^No files match/)

      const grepped = await call('grep', { pattern: 'needle', glob: HANGING_GLOB })
      assert.equal(grepped.isError, false, grepped.text)
      assert.match(grepped.text, /^No matches found/)

      const evaluated = await call('js_eval', {
        code: `(await fs.glob(${JSON.stringify(`**/${HANGING_GLOB}`)})).length`,
      })
      assert.equal(evaluated.isError, false, evaluated.text)
      assert.match(evaluated.text, /\b0\b/)

      const after = await call('read_file', { path: `notes/${LONG_NAME}` })
      assert.equal(after.text, 'needle\n')
    } finally {
      await client.close()
    }
  })

  it('stops a grep whose pattern costs minutes on one large file at its deadline', async () => {
    await using scratch = await project()
    // 16 MB of lowercase lines: RE2 steps through `[a-z]{1000}` states at every byte, about
    // 13 s a megabyte, all of it in one call of the matcher.
    const line = `${'abcdefghij'.repeat(200)}\n`
    await fs.writeFile(path.join(scratch.workspace, 'big.txt'), line.repeat(8000))
    const client = new Client({ name: 'pattern-hang-client', version: '1.0.0' })
    const call = await connectServe(client, scratch)
    try {
      const control = await call('grep', { pattern: 'needle', path: 'notes' })
      assert.equal(control.text, `notes/${LONG_NAME}:1:needle`)

      const grepped = await call('grep', { pattern: '[a-z]{1000}[0-9]', path: 'big.txt' })
      assert.equal(grepped.isError, false, grepped.text)
      assert.match(grepped.text, /\[stopped after 10 s; narrow path or glob\]/)
      assert.equal(grepped.metadata['truncated'], true)

      const after = await call('read_file', { path: `notes/${LONG_NAME}` })
      assert.equal(after.text, 'needle\n')
    } finally {
      await client.close()
    }
  })

  it('refuses a glob longer than any path as invalid input', async () => {
    await using scratch = await project()
    const client = new Client({ name: 'pattern-hang-client', version: '1.0.0' })
    const call = await connectServe(client, scratch)
    try {
      const long = await call('glob', { pattern: '*'.repeat(5000) })
      assert.deepEqual([long.isError, long.code], [true, 'invalid_input'], long.text)
    } finally {
      await client.close()
    }
  })
})
