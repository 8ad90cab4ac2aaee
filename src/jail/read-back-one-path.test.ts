/**
 * One path the read-back cannot take as it is (a link replaced by a folder, a link to itself,
 * a path too long for the host) is brought back another way or refused alone: it never fails
 * the whole command's read-back, and the command's other changes come back.
 */
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

for (const layers of ['overlay', 'mirror'] as const) {
  it(
    `refuses a path too long for the host alone, and brings back the rest (${layers})`,
    { skip: layers === 'overlay' && !IS_ROOT && 'overlays need root' },
    async (t) => {
      const { jail, workspace } = await jailFixture(
        t,
        { 'a.txt': 'a\n' },
        { layers, waitForWarmJail: false },
      )
      await assertJailAvailable(jail)
      // 16 folders of 250 bytes and a file: about 4,070 bytes, which the jail's /workspace
      // takes and the host's longer folder name does not (PATH_MAX is 4,096).
      const started = await jail.start({
        command: [
          '/bin/bash',
          '-c',
          `p=.; for i in $(seq 16); do p=$p/$(printf 'd%.0s' $(seq 250)); done; mkdir -p $p && echo x > $p/$(printf 'e%.0s' $(seq 50)); echo b > b.txt`,
        ],
        access: 'workspace-write',
      })
      const result = await started.finished
      assert.equal(result.exitCode, 0, result.stderr)
      assert.equal(fs.readFileSync(path.join(workspace, 'b.txt'), 'utf8'), 'b\n')
      const refused = result.sync?.refused ?? []
      assert.equal(refused.length, 1, JSON.stringify(refused))
      assert.match(refused[0]?.reason ?? '', /longer than 2048 bytes/)
    },
  )
}
