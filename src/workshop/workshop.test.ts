import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { makeScratch } from '../../test/helpers/scratch.ts'
import { openWorkshop } from './workshop.ts'

describe('openWorkshop', () => {
  it('runs calls through the contract on the given folder', async () => {
    await using scratch = await makeScratch({ 'a.md': 'hello\n' })
    await using workshop = await openWorkshop({
      workspace: scratch.workspace,
      stateDir: scratch.stateDir,
      configPath: scratch.configPath,
    })
    assert.equal((await workshop.call('read_file', { path: 'a.md' })).content, 'hello\n')
    assert.ok(!workshop.stateDir.startsWith(scratch.workspace), 'state lives outside the workspace')
  })

  it('hides a state folder and a configuration file that lie inside the workspace', async () => {
    await using scratch = await makeScratch({
      'eitri-state/secret.json': '{}',
      'eitri.json': '{"protectedPaths":[]}',
    })
    await using workshop = await openWorkshop({
      workspace: scratch.workspace,
      stateDir: path.join(scratch.workspace, 'eitri-state'),
      configPath: path.join(scratch.workspace, 'eitri.json'),
    })
    for (const input of [{ path: 'eitri-state/secret.json' }, { path: 'eitri.json' }]) {
      const read = await workshop.call('read_file', input)
      assert.equal(read.type === 'error' && read.code, 'protected_path', input.path)
      const write = await workshop.call('write_file', {
        ...input,
        content: '{"protectedPaths":["**"]}',
      })
      assert.equal(write.type === 'error' && write.code, 'protected_path', input.path)
    }
    assert.equal(
      await fs.readFile(path.join(scratch.workspace, 'eitri.json'), 'utf8'),
      '{"protectedPaths":[]}',
    )
    const listed = await workshop.call('glob', { pattern: '**/*' })
    assert.doesNotMatch(listed.content, /eitri-state|eitri\.json/)
  })

  it('refuses the workspace itself as the state folder', async () => {
    await using scratch = await makeScratch()
    await assert.rejects(
      openWorkshop({
        workspace: scratch.workspace,
        stateDir: scratch.workspace,
        configPath: scratch.configPath,
      }),
      /cannot be the workspace itself/,
    )
  })

  it('refuses calls after close', async () => {
    await using scratch = await makeScratch()
    const workshop = await openWorkshop({
      workspace: scratch.workspace,
      stateDir: scratch.stateDir,
      configPath: scratch.configPath,
    })
    await workshop.close()
    await assert.rejects(workshop.call('glob', { pattern: '*' }), /closed/)
  })
})
