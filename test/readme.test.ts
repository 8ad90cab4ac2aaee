/**
 * README stays true: its library example runs as written (with `eitri` resolved to this
 * checkout) and prints what it promises, and each configuration under "Models" loads, its
 * roster included, as a user copying it would load it.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { it } from 'node:test'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../src/config/config-file.ts'
import { configuredRoster } from '../src/workshop/configured-roster.ts'
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

it("README's model configurations load as written", async () => {
  const readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8')
  const start = readme.indexOf('## Models')
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1))
  const blocks = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1] ?? '')
  assert.ok(blocks.length >= 2, 'README shows configurations under "Models"')
  await using scratch = await makeScratch()
  for (const block of blocks) {
    await fs.writeFile(scratch.configPath, block)
    const config = await loadConfig(scratch.configPath)
    const coder = configuredRoster(config, scratch.configPath)
      .toJSON()
      .agents.find((agent) => agent.id === 'coder')
    // A configured coder keeps a prompt: the shipped one's, or its own.
    assert.ok(typeof coder?.prompt === 'string' && coder.prompt.length > 0, block)
  }
})
