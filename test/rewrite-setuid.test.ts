/**
 * A file tool's rewrite of a file keeps the file's permission bits, never its setuid, setgid
 * or sticky bits: the new file is the writer's (root, when eitri runs as root), so a model's
 * content behind the old file's setuid bit ran as eitri's user for anyone who ran it. The jail's
 * write-back and merges already return permission bits only.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { openWorkshop } from '../src/workshop/workshop.ts'
import { makeScratch } from './helpers/scratch.ts'

describe('a rewrite through a file tool', () => {
  for (const [name, bits] of [
    ['setuid', 0o4755],
    ['setgid', 0o2755],
    ['sticky', 0o1755],
  ] as const) {
    it(`keeps the permission bits of a ${name} file, not the ${name} bit`, async () => {
      await using scratch = await makeScratch({ 'tool.sh': '#!/bin/sh\necho user\n' })
      const file = path.join(scratch.workspace, 'tool.sh')
      await fs.chmod(file, bits)
      // The control: the file is as the test made it.
      assert.equal((await fs.stat(file)).mode & 0o7777, bits)
      await using workshop = await openWorkshop({ ...scratch.workshopOptions })
      for (const call of [
        () => workshop.call('write_file', { path: 'tool.sh', content: '#!/bin/sh\nid\n' }),
        () =>
          workshop.call('edit_file', {
            path: 'tool.sh',
            old_string: 'id',
            new_string: 'id -u',
          }),
      ]) {
        await fs.chmod(file, bits)
        const written = await call()
        assert.equal(written.type, 'success', written.content)
        assert.equal((await fs.stat(file)).mode & 0o7777, 0o755)
      }
      assert.equal(await fs.readFile(file, 'utf8'), '#!/bin/sh\nid -u\n')
    })
  }
})
