import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { assertJailAvailable, jailFixture } from './test-jail.ts'

const IS_ROOT = process.getuid?.() === 0

// A command that replaces a link of the workspace with a folder: the read-back removes the
// link and brings back the folder, whatever the link led to (itself, `loop -> loop`, included),
// and the rest of the command's changes with it.
for (const layers of ['overlay', 'mirror'] as const) {
  describe(
    `a link a command replaced with a folder (${layers})`,
    { skip: layers === 'overlay' && !IS_ROOT && 'overlays need root' },
    () => {
      for (const target of ['loop', 'a.txt']) {
        it(`brings back the folder in place of a link to ${target}`, async (t) => {
          const { jail, workspace } = await jailFixture(
            t,
            { 'a.txt': 'a\n' },
            { layers, waitForWarmJail: false },
          )
          await assertJailAvailable(jail)
          fs.symlinkSync(target, path.join(workspace, 'loop'))
          const started = await jail.start({
            command: [
              '/bin/bash',
              '-c',
              'rm loop && mkdir loop && echo x > loop/x; echo b > b.txt',
            ],
            access: 'workspace-write',
          })
          const result = await started.finished
          assert.equal(result.exitCode, 0, result.stderr)
          assert.ok(fs.lstatSync(path.join(workspace, 'loop')).isDirectory())
          assert.equal(fs.readFileSync(path.join(workspace, 'b.txt'), 'utf8'), 'b\n')
          assert.equal(fs.readFileSync(path.join(workspace, 'a.txt'), 'utf8'), 'a\n')
          assert.deepEqual(result.sync?.deleted, ['loop'])
          assert.ok(result.sync?.written.includes('loop'))
          // What the folder holds was judged through the link the host still had: a loop
          // refuses it (the next command's writes there come back), a link to a file does not.
          if (target === 'loop') {
            assert.deepEqual(
              result.sync?.refused.map((refusal) => refusal.path),
              ['loop/x'],
            )
          } else {
            assert.equal(fs.readFileSync(path.join(workspace, 'loop/x'), 'utf8'), 'x\n')
          }
        })
      }
    },
  )
}
