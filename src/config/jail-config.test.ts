import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { loadConfig } from './config-file.ts'

async function configFrom(json: unknown) {
  const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-jail-config-'))
  const file = path.join(folder, 'config.json')
  await fs.writeFile(file, JSON.stringify(json))
  try {
    return await loadConfig(file)
  } finally {
    await fs.rm(folder, { recursive: true, force: true })
  }
}

describe('the jail configuration', () => {
  it('gives a jailed command 4 GiB of memory unless told otherwise', async () => {
    assert.equal((await configFrom({})).jail.memoryBytes, 4 * 1024 ** 3)
    assert.equal((await configFrom({ jail: {} })).jail.memoryBytes, 4 * 1024 ** 3)
    const raised = await configFrom({ jail: { memoryBytes: 8 * 1024 ** 3 } })
    assert.equal(raised.jail.memoryBytes, 8 * 1024 ** 3)
    assert.equal(raised.jail.maxFileBytes, 64 * 1024 ** 2)
  })

  it('refuses a memory limit too small to run anything, naming the field', async () => {
    await assert.rejects(configFrom({ jail: { memoryBytes: 1024 } }), (error: Error) => {
      assert.match(error.message, /jail\.memoryBytes/)
      assert.match(error.message, /at least 16 MiB/)
      return true
    })
  })
})
