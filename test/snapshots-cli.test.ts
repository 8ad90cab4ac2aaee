/**
 * Snapshots and restore from the terminal, through the real `eitri` process: `eitri log`,
 * `eitri restore` (refusing what the person changed since, unless --force), snapshots around
 * `eitri exec`, and `eitri forks --prune` under a retention setting.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { runEitri } from './helpers/eitri-process.ts'
import { makeScratch } from './helpers/scratch.ts'

interface Listed {
  readonly id: number
  readonly kind: string
  readonly call?: { tool: string; detail?: string; session?: string }
}

describe('eitri log and eitri restore', () => {
  it('lists the snapshot before a call and restores it; refuses the person’s later edit unless --force', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'a1\n', 'b.txt': 'b1\n' })
    const read = (name: string) =>
      fs.readFile(path.join(scratch.workspace, name), 'utf8').catch(() => undefined)
    const call = await runEitri([
      'call',
      'shell',
      JSON.stringify({
        command: 'echo a2 > a.txt && python3 -c \'import os; os.remove("b.txt")\'',
      }),
      ...scratch.flags,
    ])
    assert.equal(call.status, 0, call.stderr)
    const logged = await runEitri(['log', '--json', ...scratch.flags])
    assert.equal(logged.status, 0, logged.stderr)
    const [snapshot] = JSON.parse(logged.stdout) as Listed[]
    assert.equal(snapshot?.kind, 'before')
    assert.equal(snapshot.call?.tool, 'shell')
    assert.match(snapshot.call?.detail ?? '', /^echo a2 > a\.txt/)

    const text = await runEitri(['log', ...scratch.flags])
    assert.match(
      text.stdout,
      new RegExp(`^#${snapshot.id}  \\S+  before shell: echo a2 > a\\.txt`, 'm'),
    )

    const restored = await runEitri(['restore', String(snapshot.id), ...scratch.flags])
    assert.equal(restored.status, 0, restored.stderr)
    assert.match(
      restored.stdout,
      new RegExp(`^Restored snapshot #${snapshot.id}: a\\.txt, b\\.txt$`, 'm'),
    )
    assert.match(restored.stdout, /^Undo it with: eitri restore \d+$/m)
    assert.equal(await read('a.txt'), 'a1\n')
    assert.equal(await read('b.txt'), 'b1\n')

    // The person edits a.txt; an agent call changes b.txt; restoring refuses a.txt
    await fs.writeFile(path.join(scratch.workspace, 'a.txt'), 'the person’s edit\n')
    await runEitri(['call', 'write_file', '{"path":"b.txt","content":"b3\\n"}', ...scratch.flags])
    const refused = await runEitri(['restore', String(snapshot.id), ...scratch.flags])
    assert.equal(refused.status, 1)
    assert.match(refused.stderr, /these were changed outside eitri calls \(by you\?\): a\.txt\n/)
    assert.equal(await read('b.txt'), 'b3\n', 'nothing changed')
    const one = await runEitri(['restore', String(snapshot.id), 'b.txt', ...scratch.flags])
    assert.equal(one.status, 0, one.stderr)
    assert.equal(await read('b.txt'), 'b1\n')
    const forced = await runEitri(['restore', String(snapshot.id), '--force', ...scratch.flags])
    assert.equal(forced.status, 0, forced.stderr)
    assert.equal(await read('a.txt'), 'a1\n')

    const after = JSON.parse(
      (await runEitri(['log', '--json', ...scratch.flags])).stdout,
    ) as Listed[]
    assert.deepEqual(
      after.slice(0, 3).map((entry) => [entry.call?.tool, entry.call?.session]),
      [
        ['eitri restore', 'cli'],
        ['eitri restore', 'cli'],
        ['eitri restore', 'cli'],
      ],
    )
  })

  it('eitri log lists a call that waited for a person once, by the snapshot before it', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'a1\n', 'old/b.txt': 'b1\n' })
    const { openWorkshop } = await import('../src/workshop/workshop.ts')
    {
      await using workshop = await openWorkshop({
        workspace: scratch.workspace,
        stateDir: scratch.stateDir,
        configPath: scratch.configPath,
        approver: async () => ({ type: 'approved', by: 'test' }),
      })
      // Wiping the workspace asks a person; the snapshots around the wait are the person's time.
      const ran = await workshop.call('shell', { command: 'rm -rf *' })
      assert.equal(ran.type, 'success', ran.content)
      const kinds = (await workshop.lines.snapshots.list()).map((record) => record.kind)
      assert.deepEqual(kinds, ['after', 'before', 'after', 'before'])
    }
    const text = await runEitri(['log', ...scratch.flags])
    assert.equal(text.status, 0, text.stderr)
    assert.equal(text.stdout.match(/shell: rm -rf \*/g)?.length, 1, text.stdout)
    const listed = JSON.parse(
      (await runEitri(['log', '--json', ...scratch.flags])).stdout,
    ) as Listed[]
    assert.deepEqual(
      listed.map((entry) => [entry.id, entry.kind, entry.call?.detail]),
      [[1, 'before', 'rm -rf *']],
    )
    // That snapshot undoes the whole call.
    const restored = await runEitri(['restore', '1', ...scratch.flags])
    assert.equal(restored.status, 0, restored.stderr)
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'old/b.txt'), 'utf8'), 'b1\n')
  })

  it('eitri log shows an escape sequence in a command as an escape, not to the terminal', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'a1\n' })
    // Raw, it sets the terminal's title and clears the line before "innocent".
    const command = "echo a2 > a.txt; echo '\x1b]0;title\x07\x1b[2Kinnocent'"
    const call = await runEitri(['call', 'shell', JSON.stringify({ command }), ...scratch.flags])
    assert.equal(call.status, 0, call.stderr)
    const text = await runEitri(['log', ...scratch.flags])
    assert.match(
      text.stdout,
      /before shell: echo a2 > a\.txt; echo '\\x1b\]0;title\\x07\\x1b\[2Kinnocent'/,
    )
    assert.equal(text.stdout.includes('\x1b'), false, text.stdout)
  })

  it('eitri exec on main runs between snapshots', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'a1\n' })
    const ran = await runEitri(['exec', ...scratch.flags, '--', 'sh', '-c', 'echo a2 > a.txt'])
    assert.equal(ran.status, 0, ran.stderr)
    const [snapshot] = JSON.parse(
      (await runEitri(['log', '--json', ...scratch.flags])).stdout,
    ) as Listed[]
    assert.deepEqual([snapshot?.kind, snapshot?.call?.tool], ['before', 'eitri exec'])
    assert.equal((await runEitri(['restore', String(snapshot?.id), ...scratch.flags])).status, 0)
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'a.txt'), 'utf8'), 'a1\n')
  })

  it('an unknown snapshot is an error naming the ones there are', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'a1\n' })
    const result = await runEitri(['restore', '99', ...scratch.flags])
    assert.equal(result.status, 1)
    assert.match(result.stderr, /^eitri: No snapshot "99"\. There are no snapshots yet\.\n$/)
    const usage = await runEitri(['restore', ...scratch.flags])
    assert.equal(usage.status, 2)
  })
})

describe('eitri forks --prune', () => {
  it('deletes the snapshots beyond the configured retention', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'a\n' })
    await fs.writeFile(scratch.configPath, JSON.stringify({ snapshots: { keep: 2 } }))
    for (const content of ['1', '2', '3'])
      assert.equal(
        (
          await runEitri([
            'call',
            'write_file',
            JSON.stringify({ path: 'a.txt', content }),
            ...scratch.flags,
          ])
        ).status,
        0,
      )
    const listed = async () =>
      JSON.parse((await runEitri(['log', '--json', ...scratch.flags])).stdout) as Listed[]
    assert.equal((await listed()).length, 3)
    const pruned = await runEitri(['forks', '--prune', ...scratch.flags])
    assert.equal(pruned.status, 0, pruned.stderr)
    assert.match(pruned.stderr, /^Pruned 2 snapshot record\(s\)/)
    assert.deepEqual(
      (await listed()).map((entry) => entry.id),
      [5, 3],
    )
  })

  it('a wrong retention setting is refused naming the field', async () => {
    await using scratch = await makeScratch()
    await fs.writeFile(scratch.configPath, JSON.stringify({ snapshots: { keep: 0 } }))
    const result = await runEitri(['log', ...scratch.flags])
    assert.equal(result.status, 1)
    assert.match(result.stderr, /snapshots\.keep/)
  })
})
