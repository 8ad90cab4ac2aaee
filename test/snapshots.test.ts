/**
 * Nothing an agent does to main is unrecoverable: every call that may change main is preceded
 * by a snapshot (real tools, the real jail, real git), and a restore brings back files and the
 * user's git branches that a jailed command deleted or moved.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import type { SnapshotRecord } from '../src/workspace/snapshot-record.ts'
import { openWorkshop, type Workshop } from '../src/workshop/workshop.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

async function open(scratch: Scratch): Promise<Workshop> {
  return openWorkshop({
    workspace: scratch.workspace,
    stateDir: scratch.stateDir,
    configPath: scratch.configPath,
    // A person who approves everything, so merges into main and restores go ahead.
    approver: async () => ({ type: 'approved', by: 'test' }),
  })
}

/** A file as a snapshot holds it; undefined when it holds none. */
function fileAt(workshop: Workshop, record: SnapshotRecord, file: string): string | undefined {
  try {
    return execFileSync(
      'git',
      ['--git-dir', workshop.lines.history.gitDir, 'show', `${record.commit}:files/${file}`],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
    )
  } catch {
    return undefined
  }
}

async function records(workshop: Workshop): Promise<SnapshotRecord[]> {
  return (await workshop.lines.snapshots.list()).reverse()
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    ['-c', 'user.name=person', '-c', 'user.email=person@example.invalid', ...args],
    { cwd, encoding: 'utf8' },
  ).trim()
}

describe('snapshots before calls that may change main', () => {
  it('each change-tool on main takes a snapshot before it and after it; read-only tools and forks take none', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'one\n' })
    await using workshop = await open(scratch)
    const cases: [string, Record<string, unknown>, string | undefined][] = [
      ['read_file', { path: 'a.txt' }, undefined],
      ['glob', { pattern: '**/*' }, undefined],
      ['grep', { pattern: 'one' }, undefined],
      ['task_create', { title: 'a task' }, undefined],
      ['write_file', { path: 'a.txt', content: 'two\n' }, 'a.txt'],
      ['edit_file', { path: 'a.txt', old_string: 'two', new_string: 'three' }, 'a.txt'],
      ['shell', { command: 'echo shell > s.txt' }, 's.txt'],
      ['js_eval', { code: "await fs.writeFile('j.txt', 'eval\\n')" }, 'j.txt'],
      ['room_write', { files: [{ path: 'r.txt', content: 'room\n' }] }, 'r.txt'],
      ['workspace_fork', { name: 'exp' }, undefined],
      ['room_write', { files: [{ path: 'm.txt', content: 'fork\n' }], fork: 'exp' }, undefined],
      ['workspace_merge', { fork: 'exp' }, 'm.txt'],
    ]
    for (const [tool, input, changed] of cases) {
      const seen = (await records(workshop)).length
      const result = await workshop.call(tool, input)
      assert.equal(result.type, 'success', `${tool}: ${result.content}`)
      const taken = (await records(workshop)).slice(seen)
      if (changed === undefined) {
        assert.deepEqual(taken, [], `${tool} ${JSON.stringify(input)} takes no snapshot`)
        continue
      }
      // A merge into main asks a person; the wait is the person's time, between two snapshots.
      const asked = tool === 'workspace_merge'
      assert.deepEqual(
        taken.map((record) => [record.kind, record.call?.tool]),
        [
          ['before', tool],
          ...(asked
            ? [
                ['after', tool],
                ['before', tool],
              ]
            : []),
          ['after', tool],
        ],
        tool,
      )
      if (asked) assert.match(taken[1]?.call?.detail ?? '', /waiting for a person/)
      const before = taken[0] as SnapshotRecord
      const after = taken.at(-1) as SnapshotRecord
      const live = await fs.readFile(path.join(scratch.workspace, changed), 'utf8')
      assert.notEqual(
        fileAt(workshop, before, changed),
        live,
        `${tool}: before holds the old ${changed}`,
      )
      assert.equal(
        fileAt(workshop, after, changed),
        live,
        `${tool}: after holds the new ${changed}`,
      )
    }
    const [, , write] = (await records(workshop)).filter((record) => record.kind === 'before')
    assert.equal(write?.call?.detail, 'echo shell > s.txt', 'the command is recorded')
    assert.match(write?.call?.session ?? '', /^s-[0-9a-f]{16}$/)
  })

  it('a session working on a fork takes no snapshot of main', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'one\n' })
    await using workshop = await open(scratch)
    await using session = await workshop.openSession({ isolate: true })
    const result = await workshop.toolset.run(
      { name: 'shell', input: { command: 'echo x > a.txt' } },
      session.context(),
    )
    assert.equal(result.type, 'success', result.content)
    assert.deepEqual(await records(workshop), [])
  })
})

describe('restore', () => {
  it('brings back what a jailed command deleted, only the paths named, and is itself undoable', async () => {
    await using scratch = await makeScratch({
      'src/a.ts': 'export const a = 1\n',
      'src/deep/b.ts': 'export const b = 2\n',
      'README.md': 'readme\n',
    })
    await using workshop = await open(scratch)
    const removed = await workshop.call('shell', {
      command: `python3 -c 'import shutil; shutil.rmtree("src")'; echo gone > README.md`,
    })
    assert.equal(removed.type, 'success', removed.content)
    await assert.rejects(fs.access(path.join(scratch.workspace, 'src')))
    const before = (await records(workshop)).find((record) => record.kind === 'before')
    assert.ok(before)

    const one = await workshop.call('workspace_restore', {
      snapshot: before.id,
      paths: ['src/deep'],
    })
    assert.equal(one.type, 'success', one.content)
    assert.equal(
      await fs.readFile(path.join(scratch.workspace, 'src/deep/b.ts'), 'utf8'),
      'export const b = 2\n',
    )
    await assert.rejects(fs.access(path.join(scratch.workspace, 'src/a.ts')), 'only the path named')
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'README.md'), 'utf8'), 'gone\n')

    const all = await workshop.call('workspace_restore', { snapshot: `#${before.id}` })
    assert.equal(all.type, 'success', all.content)
    assert.equal(
      await fs.readFile(path.join(scratch.workspace, 'src/a.ts'), 'utf8'),
      'export const a = 1\n',
    )
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'README.md'), 'utf8'), 'readme\n')

    // the restore took a snapshot first: restoring that one undoes it
    const undo = all.metadata.undo
    assert.equal(typeof undo, 'number')
    const undone = await workshop.call('workspace_restore', { snapshot: undo as number })
    assert.equal(undone.type, 'success', undone.content)
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'README.md'), 'utf8'), 'gone\n')
    await assert.rejects(fs.access(path.join(scratch.workspace, 'src/a.ts')))
  })

  it('refuses, with the list, a file a person changed since the snapshot, unless forced', async () => {
    await using scratch = await makeScratch({ 'agent.txt': 'v1\n', 'mine.txt': 'v1\n' })
    await using workshop = await open(scratch)
    await workshop.call('write_file', { path: 'agent.txt', content: 'v2\n' })
    const before = (await records(workshop)).find((record) => record.kind === 'before')
    assert.ok(before)
    // the person edits between two calls
    await fs.writeFile(path.join(scratch.workspace, 'mine.txt'), 'my own edit\n')
    await workshop.call('write_file', { path: 'agent.txt', content: 'v3\n' })

    const refused = await workshop.call('workspace_restore', { snapshot: before.id })
    assert.equal(refused.type === 'error' && refused.code, 'conflict', refused.content)
    assert.match(
      refused.content,
      /a person \(not an eitri call\) changed: mine\.txt\. Nothing changed\./,
    )
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'agent.txt'), 'utf8'), 'v3\n')

    const others = await workshop.call('workspace_restore', {
      snapshot: before.id,
      paths: ['agent.txt'],
    })
    assert.equal(others.type, 'success', others.content)
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'agent.txt'), 'utf8'), 'v1\n')
    assert.equal(
      await fs.readFile(path.join(scratch.workspace, 'mine.txt'), 'utf8'),
      'my own edit\n',
    )

    const forced = await workshop.call('workspace_restore', { snapshot: before.id, force: true })
    assert.equal(forced.type, 'success', forced.content)
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'mine.txt'), 'utf8'), 'v1\n')
  })

  it('counts what a background job writes after its call answered as the call’s, not a person’s', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'one\n' })
    await using workshop = await open(scratch)
    const started = await workshop.call('shell', {
      command: 'sleep 1; echo late > late.txt',
      background: true,
    })
    assert.equal(started.type, 'success', started.content)
    const id = started.metadata.id as string
    for (;;) {
      const read = await workshop.call('shell_output', { id })
      if (read.metadata.running === false) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    await workshop.lines.snapshots.around({ tool: 'test' }, async () => undefined)
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'late.txt'), 'utf8'), 'late\n')
    const taken = await records(workshop)
    assert.deepEqual(taken.map((record) => [record.kind, record.call?.detail]).slice(0, 3), [
      ['before', 'sleep 1; echo late > late.txt'],
      ['after', 'sleep 1; echo late > late.txt'],
      ['after', 'sleep 1; echo late > late.txt (background job)'],
    ])
    const restored = await workshop.call('workspace_restore', { snapshot: taken[0]?.id ?? 0 })
    assert.equal(restored.type, 'success', restored.content)
    await assert.rejects(fs.access(path.join(scratch.workspace, 'late.txt')))
  })

  it('puts back the branch a jailed commit moved; a branch the jail deleted was never lost', async (t) => {
    await using scratch = await makeScratch({ 'a.txt': 'one\n' })
    git(scratch.workspace, 'init', '-q', '-b', 'main')
    git(scratch.workspace, 'add', '-A')
    git(scratch.workspace, 'commit', '-qm', 'first')
    git(scratch.workspace, 'branch', 'feature')
    const first = git(scratch.workspace, 'rev-parse', 'main')
    await using workshop = await open(scratch)
    const jailed = await workshop.call('shell', {
      command:
        'git branch -D feature && echo two > a.txt && git commit -qam "agent commit" && git rev-parse main',
    })
    assert.equal(jailed.type, 'success', jailed.content)
    const moved = git(scratch.workspace, 'rev-parse', 'main')
    if (moved === first) t.diagnostic('the jail did not let the commit move main')
    // History only grows from the jail: the deletion did not come back, and the answer says so.
    assert.equal(git(scratch.workspace, 'rev-parse', 'refs/heads/feature'), first)
    assert.match(
      jailed.content,
      /not written back: \.git\/refs\/heads\/feature: .*no ref may disappear/,
    )
    const before = (await records(workshop)).find((record) => record.kind === 'before')
    assert.ok(before)

    const restored = await workshop.call('workspace_restore', { snapshot: before.id })
    assert.equal(restored.type, 'success', restored.content)
    assert.equal(git(scratch.workspace, 'rev-parse', 'refs/heads/feature'), first)
    assert.equal(git(scratch.workspace, 'rev-parse', 'refs/heads/main'), first)
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'a.txt'), 'utf8'), 'one\n')
    // git itself recorded the moves, as it does its own
    assert.match(
      git(scratch.workspace, 'reflog', 'show', 'refs/heads/main'),
      /eitri: restore snapshot/,
    )
    // the agent's commit still exists: restoring never deletes objects
    assert.equal(git(scratch.workspace, 'cat-file', '-t', moved), 'commit')
  })
})
