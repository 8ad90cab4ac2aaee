/**
 * README stays true: its library example runs as written (with `eitri` resolved to this
 * checkout) and prints what it promises.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { it } from 'node:test'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { makeScratch } from './helpers/scratch.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

it("README's library example runs", async () => {
  const readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## As a library'))
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1]
  assert.ok(code, 'README has a ts block under "As a library"')
  const example = path.join(ROOT, 'test', `.readme-example-${process.pid}.ts`)
  await fs.writeFile(example, code.replace("from 'eitri'", "from '../src/index.ts'"))
  await using scratch = await makeScratch({ 'README.md': 'one two three\nfour\n' })
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [example], {
      cwd: scratch.workspace,
      env: { ...process.env, EITRI_STATE_DIR: scratch.stateDir, EITRI_CONFIG: scratch.configPath },
    })
    assert.match(stdout, /^success README\.md: 4 words$/m)
    assert.match(stdout, /'word_count'/)
  } finally {
    await fs.rm(example, { force: true })
  }
})
