/**
 * Redirections to a path that names a descriptor (`/dev/fd/N`, `/dev/stdout`, `/proc/self/fd/N`)
 * open the file behind the descriptor again, for writing, even when the command opened it only
 * for reading. Each attack below overwrites a file when bash runs it, so it is not `allow`; each
 * control writes nothing, and still is.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { CommandPolicy } from './command-policy.ts'
import { runQuietly } from '../../../test/helpers/run-quietly.ts'

describe('redirections to a descriptor, against real bash', () => {
  let policy: CommandPolicy
  let scratch: string
  before(async () => {
    policy = await CommandPolicy.load()
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-descriptor-redirects-'))
  })
  after(async () => {
    policy.close()
    await fs.rm(scratch, { recursive: true, force: true })
  })

  let count = 0
  /** Runs `source` with bash in a folder holding `notes.txt`; its content afterwards. */
  async function notesAfter(source: string): Promise<string> {
    count += 1
    const dir = path.join(scratch, String(count))
    await fs.mkdir(dir)
    await fs.writeFile(path.join(dir, 'notes.txt'), 'work\n')
    await runQuietly('/bin/bash', ['-c', source], { cwd: dir, env: process.env })
    return fs.readFile(path.join(dir, 'notes.txt'), 'utf8')
  }

  const ATTACKS: ReadonlyArray<readonly [attack: string, control: string]> = [
    ['echo x 3<notes.txt >/dev/fd/3', 'echo x 3<notes.txt >&3'],
    ['echo x 3<notes.txt >/proc/self/fd/3', 'echo x 3<notes.txt >/dev/null'],
    ['{ echo x >/dev/stdout; } <notes.txt 1<&0', '{ echo x >&1; } 2>&1 >/dev/null'],
    ['{ echo x >/dev/stderr; } 2<notes.txt', 'echo x 2>/dev/null >&2'],
    ['{ echo x >>/dev/fd/0; } <notes.txt', 'echo x 0<notes.txt >/dev/null'],
  ]

  for (const [attack, control] of ATTACKS) {
    it(`${attack} is not allow; ${control} is`, async () => {
      assert.notEqual(await notesAfter(attack), 'work\n', `the attack left the file: ${attack}`)
      const judged = policy.judge(attack)
      assert.equal(judged.verdict, 'jail', judged.reason)
      assert.equal(judged.rule, 'writes-file', judged.reason)
      assert.equal(await notesAfter(control), 'work\n', `the control wrote the file: ${control}`)
      const controlled = policy.judge(control)
      assert.equal(controlled.verdict, 'allow', `${control}: ${controlled.reason}`)
    })
  }

  it('judges /dev/tty like any file, and /dev/null, 2>&1 and >&2 as harmless', () => {
    for (const source of ['echo x >/dev/tty', 'ls 2>/dev/stdout', 'ls &>/dev/stderr'])
      assert.equal(policy.judge(source).verdict, 'jail', source)
    for (const source of ['echo hi > /dev/null', 'ls 2>&1', 'echo x >&2', 'ls &>/dev/null'])
      assert.equal(policy.judge(source).verdict, 'allow', source)
  })
})
