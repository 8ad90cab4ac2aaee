import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { linesFixture } from './test-lines.ts'
import { WorkspaceLines } from './workspace-lines.ts'

const call = (detail: string) => ({ tool: 'shell', detail, session: 's-test' })

describe('snapshots of main', () => {
  it('records one snapshot before and one after each call, reusing trees when nothing changed', async (t) => {
    const { lines, workspace } = await linesFixture(t, { 'a.txt': 'v1\n' })
    await lines.snapshots.around(call('echo v2 > a.txt'), () =>
      fs.writeFile(path.join(workspace, 'a.txt'), 'v2\n'),
    )
    await lines.snapshots.around(call('true'), async () => undefined)
    const records = await lines.snapshots.list()
    assert.deepEqual(
      records.map((record) => [record.id, record.kind, record.call?.detail]),
      [
        [4, 'after', 'true'],
        [3, 'before', 'true'],
        [2, 'after', 'echo v2 > a.txt'],
        [1, 'before', 'echo v2 > a.txt'],
      ],
    )
    const trees = await Promise.all(records.map((record) => lines.snapshots.log.treeOf(record)))
    assert.equal(trees[0], trees[1], 'nothing changed: the same content tree')
    assert.equal(trees[1], trees[2])
    assert.notEqual(trees[2], trees[3])
    assert.equal(records[3]?.inFlight, 1)
    assert.equal(records[2]?.inFlight, 0)
  })

  it('a new process numbers its snapshots after every existing one, packed references too', async (t) => {
    const { lines, stateDir } = await linesFixture(t, { 'a.txt': 'v1\n' })
    await lines.snapshots.around(call('true'), async () => undefined)
    // A person packs eitri's history references (git gc would): the numbers stay taken.
    execFileSync('git', ['--git-dir', lines.history.gitDir, 'pack-refs', '--all'])
    const again = await WorkspaceLines.open({ main: lines.main, stateDir })
    t.after(() => again.close())
    await again.snapshots.around(call('echo'), async () => undefined)
    const records = await again.snapshots.list()
    assert.deepEqual(
      records.map((record) => [record.id, record.kind, record.call?.detail]),
      [
        [4, 'after', 'echo'],
        [3, 'before', 'echo'],
        [2, 'after', 'true'],
        [1, 'before', 'true'],
      ],
    )
  })

  it('restores files a call deleted, only the paths named when given, and is refused for a person’s change unless forced', async (t) => {
    const { lines, workspace, live } = await linesFixture(t, {
      'src/a.ts': 'a\n',
      'src/b.ts': 'b\n',
      'notes.md': 'n1\n',
    })
    await lines.snapshots.around(call('rm -rf src'), () =>
      fs.rm(path.join(workspace, 'src'), { recursive: true }),
    )
    const [, before] = await lines.snapshots.list()
    assert.equal(before?.kind, 'before')
    // a person edits notes.md between calls; a later call overwrites it
    await fs.writeFile(path.join(workspace, 'notes.md'), 'mine\n')
    await lines.snapshots.around(call('echo x > notes.md'), () =>
      fs.writeFile(path.join(workspace, 'notes.md'), 'agent\n'),
    )
    const only = await lines.restore(before?.id ?? 0, { paths: ['src/a.ts'] })
    assert.equal(only.type, 'restored')
    assert.equal(await live('src/a.ts'), 'a\n')
    assert.equal(await live('src/b.ts'), undefined, 'only the path named')
    const refused = await lines.restore(before?.id ?? 0)
    assert.deepEqual(refused, {
      type: 'changed-since',
      snapshot: before?.id,
      paths: ['notes.md'],
      refs: [],
    })
    assert.equal(await live('src/b.ts'), undefined, 'a refused restore changes nothing')
    const forced = await lines.restore(before?.id ?? 0, { force: true })
    assert.equal(forced.type, 'restored')
    assert.deepEqual(forced.type === 'restored' ? forced.paths : [], ['notes.md', 'src/b.ts'])
    assert.equal(await live('notes.md'), 'n1\n')
  })
})

describe('snapshots: size bound, git references, retention', () => {
  it('leaves files over the size bound out, lists them, and never restores over or away from them', async (t) => {
    const { lines, workspace, live, stateDir } = await linesFixture(
      t,
      { 'small.txt': 's\n', 'data/big.bin': 'x'.repeat(300), 'grows.txt': 'short\n' },
      { maxFileBytes: 100 },
    )
    await lines.snapshots.around(call('grow'), () =>
      fs.writeFile(path.join(workspace, 'grows.txt'), 'y'.repeat(300)),
    )
    const [after, before] = await lines.snapshots.list()
    assert.deepEqual(before?.skipped, ['data/big.bin'])
    assert.deepEqual(after?.skipped, ['data/big.bin', 'grows.txt'])
    const listed = execFileSync(
      'git',
      [
        '--git-dir',
        path.join(stateDir, 'history.git'),
        'ls-tree',
        '-r',
        '--name-only',
        `${after?.commit}:files`,
      ],
      { encoding: 'utf8' },
    )
    assert.equal(listed, 'small.txt\n', 'neither large file is in the snapshot')
    // data/big.bin shrinks: it is snapshotted from now on
    await lines.snapshots.around(call('shrink'), () =>
      fs.writeFile(path.join(workspace, 'data/big.bin'), 'now small\n'),
    )
    assert.deepEqual((await lines.snapshots.list())[0]?.skipped, ['grows.txt'])
    // Restoring the first snapshot would delete data/big.bin (absent from it for its size then)
    // and overwrite grows.txt (large now, so never snapshotted): both are left alone.
    const outcome = await lines.restore(before?.id ?? 0)
    assert.deepEqual(outcome, {
      type: 'nothing',
      snapshot: before?.id,
      tooLarge: ['data/big.bin', 'grows.txt'],
    })
    assert.equal((await live('grows.txt'))?.length, 300)
    assert.equal(await live('data/big.bin'), 'now small\n')
  })

  it('refuses to move back a git reference a person moved since the snapshot, unless forced', async (t) => {
    const { lines, workspace } = await linesFixture(t, { 'a.txt': 'a\n' })
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=p', '-c', 'user.email=p@p', ...args], {
        cwd: workspace,
        encoding: 'utf8',
      }).trim()
    git('init', '-q', '-b', 'main')
    git('commit', '-q', '--allow-empty', '-m', 'one')
    const one = git('rev-parse', 'main')
    await lines.snapshots.around(call('true'), async () => undefined)
    const before = (await lines.snapshots.list()).find((record) => record.kind === 'before')
    git('commit', '-q', '--allow-empty', '-m', 'the person’s own commit')
    const refused = await lines.restore(before?.id ?? 0)
    assert.deepEqual(refused, {
      type: 'changed-since',
      snapshot: before?.id,
      paths: [],
      refs: ['refs/heads/main'],
    })
    const forced = await lines.restore(before?.id ?? 0, { force: true })
    assert.equal(forced.type, 'restored')
    assert.equal(git('rev-parse', 'main'), one)
  })

  it('records no references for a .git file, and says why', async (t) => {
    const { lines } = await linesFixture(t, { '.git': 'gitdir: /elsewhere/.git/worktrees/x\n' })
    await lines.snapshots.around(call('true'), async () => undefined)
    const [record] = await lines.snapshots.list()
    assert.match(record?.refsNote ?? '', /\.git is a file or link \(a worktree or submodule\)/)
  })

  it('prunes beyond the retention: at most keep snapshots, none older than maxAgeDays but the newest', async (t) => {
    const { lines } = await linesFixture(t, { 'a.txt': 'a\n' })
    for (let index = 0; index < 4; index++)
      await lines.snapshots.around(call(`call ${index}`), async () => undefined)
    const removed = await lines.snapshots.prune({ keep: 2, maxAgeDays: 30 })
    assert.deepEqual(removed, [1, 2, 3, 4])
    assert.deepEqual(
      (await lines.snapshots.list()).map((record) => record.id),
      [8, 7, 6, 5],
    )
    const later = Date.now() + 31 * 24 * 60 * 60 * 1000
    assert.deepEqual(await lines.snapshots.prune({ keep: 2, maxAgeDays: 30 }, later), [5, 6])
    assert.deepEqual(
      (await lines.snapshots.list()).map((record) => record.id),
      [8, 7],
    )
    // numbering goes on after a prune
    await lines.snapshots.around(call('next'), async () => undefined)
    assert.equal((await lines.snapshots.list())[0]?.id, 10)
  })

  it('with a watcher: the first snapshot in the background at open, then only what changed', async (t) => {
    const { lines, workspace } = await linesFixture(t, { 'a.txt': 'a\n' }, { watch: true })
    lines.snapshots.start()
    await lines.snapshots.settled()
    assert.deepEqual(
      (await lines.snapshots.list()).map((record) => record.kind),
      ['open'],
    )
    await fs.writeFile(path.join(workspace, 'person.txt'), 'p\n')
    await lines.snapshots.around(call('echo b > a.txt'), () =>
      fs.writeFile(path.join(workspace, 'a.txt'), 'b\n'),
    )
    const [after, before] = await lines.snapshots.list()
    const text = async (record: unknown, file: string) => {
      const contents = await lines.snapshots.log.contents(record as never)
      const output = execFileSync(
        'git',
        ['--git-dir', lines.history.gitDir, 'show', `${contents.files}:${file}`],
        { encoding: 'utf8' },
      )
      return output
    }
    assert.equal(await text(before, 'person.txt'), 'p\n', 'the watcher saw the person’s file')
    assert.equal(await text(before, 'a.txt'), 'a\n')
    assert.equal(await text(after, 'a.txt'), 'b\n')
  })

  it('an open snapshot is recorded only when main changed since the newest snapshot', async (t) => {
    const { lines, workspace } = await linesFixture(t, { 'a.txt': 'a\n' })
    await lines.snapshots.around(call('true'), async () => undefined)
    lines.snapshots.start()
    await lines.snapshots.settled()
    assert.equal((await lines.snapshots.list()).length, 2, 'unchanged: no open snapshot')
    await fs.writeFile(path.join(workspace, 'a.txt'), 'changed by a person\n')
    lines.snapshots.start()
    await lines.snapshots.settled()
    assert.equal((await lines.snapshots.list())[0]?.kind, 'open')
  })
})

describe('snapshots and forks share main’s index', () => {
  it('a fork taken after a snapshot saw a change has that change, with a watcher', async (t) => {
    const { lines, workspace } = await linesFixture(t, { 'a.txt': 'a\n' }, { watch: true })
    await lines.fork({ name: 'first' })
    await lines.snapshots.around(call('echo b > a.txt'), () =>
      fs.writeFile(path.join(workspace, 'a.txt'), 'b\n'),
    )
    const fork = await lines.fork({ name: 'second' })
    const tree = await lines.tree(fork.id)
    assert.equal(Buffer.from(await tree.readFile('a.txt')).toString(), 'b\n')
  })
})
