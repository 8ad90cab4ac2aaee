import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { createWorkspaceView } from '../access/confined-workspace.ts'
import { gitCommandsStarted, runGit } from './git/run-git.ts'
import { linesFixture } from './test-lines.ts'
import type { WorkspaceTree } from './workspace-tree.ts'

const text = async (tree: { readFile(path: string): Promise<Uint8Array> }, name: string) =>
  Buffer.from(await tree.readFile(name)).toString('utf8')

describe('WorkspaceLines', () => {
  it('an untouched fork is made, compared and discarded without a git process, as before', async (t) => {
    const { lines } = await linesFixture(t, { 'a.txt': 'one\n' })
    const outer = await lines.fork({ name: 'outer' })
    const gitSays = async (ref: string) =>
      (
        await runGit({ gitDir: lines.history.gitDir }, ['rev-parse', '-q', '--verify', ref], {
          check: false,
        })
      ).stdout
        .toString()
        .trim()
    const before = gitCommandsStarted()
    const inner = await lines.fork({ from: outer.id, name: 'inner' })
    assert.deepEqual(await lines.changes(inner.id), [])
    assert.deepEqual(await lines.diff(inner.id), [])
    assert.equal(gitCommandsStarted() - before, 0, 'fork and comparisons started no git')
    assert.equal(await gitSays(`refs/eitri/forks/${inner.id}`), '', 'no reference until it commits')
    assert.deepEqual(
      (await lines.log(inner.id)).map((entry) => entry.commit),
      (await lines.log(outer.id)).map((entry) => entry.commit),
      "its log is its parent's up to where it was forked",
    )
    const beforeDiscard = gitCommandsStarted()
    await lines.discard(inner.id)
    assert.equal(gitCommandsStarted() - beforeDiscard, 0, 'nor did the discard')
    assert.equal(await gitSays(`refs/eitri/forks/${inner.id}`), '', 'its history line is gone')
    const listed = (await lines.overview()).find((fork) => fork.id === inner.id)
    assert.deepEqual([listed?.state, listed?.changes], ['discarded', 0])
    // Positive control: a fork with a write is compared by git, and its diff has its text.
    const tree = await lines.tree(outer.id)
    await tree.writeFileAtomic('a.txt', Buffer.from('two\n'))
    const counted = gitCommandsStarted()
    assert.deepEqual(await lines.changes(outer.id), [{ path: 'a.txt', status: 'modified' }])
    const [change] = await lines.diff(outer.id)
    assert.match(change?.diff ?? '', /^\+two$/m)
    assert.ok(gitCommandsStarted() > counted)
    await lines.discard(outer.id)
    const discarded = (await lines.overview()).find((fork) => fork.id === outer.id)
    assert.deepEqual([discarded?.state, discarded?.changes], ['discarded', 1])
  })

  it('says what became of a gone fork: discarded when, then discarded and pruned', async (t) => {
    const { lines } = await linesFixture(t, { 'a.txt': 'one\n' })
    const fork = await lines.fork({ name: 'gone' })
    assert.equal(lines.gone(fork.id), undefined, 'an open fork is not gone')
    assert.equal(lines.gone('main'), undefined)
    await lines.discard(fork.id)
    assert.match(
      lines.gone(fork.id) ?? '',
      new RegExp(`^fork gone \\(${fork.id}\\) was discarded at \\d{4}-`),
    )
    assert.deepEqual(
      (await lines.pruneForks()).map((pruned) => pruned.id),
      [fork.id],
    )
    assert.equal(lines.gone(fork.id), `fork ${fork.id} was discarded and pruned`)
  })

  it('shows every new file of a fork: names git quotes, empty files, binary files, new folders', async (t) => {
    const { lines } = await linesFixture(t, { 'a.txt': 'one\n', 'gone.txt': '' })
    const fork = await lines.fork({ name: 'new-files' })
    const tree = await lines.tree(fork.id)
    const written: Record<string, Buffer> = {
      'é.txt': Buffer.from('accent\n'),
      'q"uote.txt': Buffer.from('quote\n'),
      'tab\\slash.txt': Buffer.from('backslash\n'),
      'a b/c b/d.txt': Buffer.from('spaces\n'),
      'empty.txt': Buffer.alloc(0),
      'image.bin': Buffer.from([0, 1, 2, 0, 255]),
      'new/deep/x.txt': Buffer.from('deep\n'),
    }
    for (const [name, content] of Object.entries(written)) await tree.writeFileAtomic(name, content)
    await tree.remove('gone.txt')
    const changes = new Map((await lines.diff(fork.id)).map((change) => [change.path, change]))
    for (const [name, line] of [
      ['é.txt', '+accent'],
      ['q"uote.txt', '+quote'],
      ['tab\\slash.txt', '+backslash'],
      ['a b/c b/d.txt', '+spaces'],
      ['new/deep/x.txt', '+deep'],
    ]) {
      const change = changes.get(name ?? '')
      assert.equal(change?.status, 'added', name)
      assert.ok(change?.diff?.split('\n').includes(line ?? ''), `${name}: ${change?.diff}`)
    }
    assert.match(
      changes.get('empty.txt')?.diff ?? '',
      /^new file mode 100644$[^]*^\(new empty file\)$/m,
    )
    assert.match(changes.get('gone.txt')?.diff ?? '', /^\(empty file deleted\)$/m)
    assert.equal(changes.get('image.bin')?.binary, true)
  })

  it('forks main exactly as it is, and writes in the fork never reach main until merged', async (t) => {
    const { lines, live, workspace } = await linesFixture(t, {
      'a.txt': 'one\n',
      'src/b.ts': 'export {}\n',
    })
    const fork = await lines.fork({ name: 'try' })
    await fs.writeFile(path.join(workspace, 'a.txt'), 'changed on main after the fork\n')
    const tree = await lines.tree('try')
    assert.equal(await text(tree, 'a.txt'), 'one\n', 'the fork captured main at fork time')
    await tree.writeFileAtomic('new.txt', Buffer.from('from the fork\n'))
    await tree.writeFileAtomic('src/b.ts', Buffer.from('export const b = 1\n'))
    assert.equal(await live('new.txt'), undefined)
    assert.equal(await live('src/b.ts'), 'export {}\n')
    const changes = await lines.diff(fork.id)
    assert.deepEqual(
      changes.map((change) => [change.path, change.status]),
      [
        ['new.txt', 'added'],
        ['src/b.ts', 'modified'],
      ],
    )
    assert.match(changes[1]?.diff ?? '', /^-export \{\}$/m)
    const outcome = await lines.merge('try')
    assert.equal(outcome.type, 'merged')
    assert.equal(await live('new.txt'), 'from the fork\n')
    assert.equal(await live('src/b.ts'), 'export const b = 1\n')
    assert.equal(
      await live('a.txt'),
      'changed on main after the fork\n',
      'main’s own change survives',
    )
  })

  it('merges non-overlapping edits to one file line by line', async (t) => {
    const { lines, live, workspace } = await linesFixture(t, { 'f.txt': 'a\nb\nc\nd\ne\n' })
    await lines.fork({ name: 'x' })
    await (await lines.tree('x')).writeFileAtomic('f.txt', Buffer.from('A\nb\nc\nd\ne\n'))
    await fs.writeFile(path.join(workspace, 'f.txt'), 'a\nb\nc\nd\nE\n')
    assert.equal((await lines.merge('x')).type, 'merged')
    assert.equal(await live('f.txt'), 'A\nb\nc\nd\nE\n')
  })

  it('reports overlapping edits as a conflict with both sides and changes nothing', async (t) => {
    const { lines, live, workspace } = await linesFixture(t, {
      'f.txt': 'a\nb\n',
      'other.txt': 'o\n',
    })
    await lines.fork({ name: 'x' })
    const tree = await lines.tree('x')
    await tree.writeFileAtomic('f.txt', Buffer.from('fork\nb\n'))
    await tree.writeFileAtomic('other.txt', Buffer.from('fork other\n'))
    await fs.writeFile(path.join(workspace, 'f.txt'), 'main\nb\n')
    const review = await lines.review('x')
    assert.equal(review.tier, 'conflict')
    const outcome = await lines.merge('x')
    assert.equal(outcome.type, 'conflict')
    assert.deepEqual(outcome.type === 'conflict' ? outcome.conflicts : [], [
      { path: 'f.txt', ours: 'main\nb\n', theirs: 'fork\nb\n' },
    ])
    assert.equal(await live('f.txt'), 'main\nb\n')
    assert.equal(await live('other.txt'), 'o\n', 'nothing else was merged either')
  })

  it('reports delete against edit as a conflict', async (t) => {
    const { lines, live, workspace } = await linesFixture(t, { 'f.txt': 'a\n' })
    await lines.fork({ name: 'x' })
    await (await lines.tree('x')).remove('f.txt')
    await fs.writeFile(path.join(workspace, 'f.txt'), 'edited\n')
    const outcome = await lines.merge('x')
    assert.equal(outcome.type, 'conflict')
    assert.deepEqual(outcome.type === 'conflict' ? outcome.conflicts[0] : undefined, {
      path: 'f.txt',
      ours: 'edited\n',
      theirs: undefined,
    })
    assert.equal(await live('f.txt'), 'edited\n')
  })

  it('merges binary files and deletions', async (t) => {
    const { lines, workspace } = await linesFixture(t, { 'gone.txt': 'x', 'dir/only.txt': 'y' })
    await lines.fork({ name: 'x' })
    const tree = await lines.tree('x')
    const binary = Buffer.from([0, 1, 2, 255, 0, 7])
    await tree.writeFileAtomic('image.bin', binary)
    await tree.remove('gone.txt')
    await tree.remove('dir/only.txt')
    const diff = await lines.diff('x')
    assert.deepEqual(
      diff.find((change) => change.path === 'image.bin'),
      { path: 'image.bin', status: 'added', binary: true },
    )
    assert.equal((await lines.merge('x')).type, 'merged')
    assert.deepEqual(await fs.readFile(path.join(workspace, 'image.bin')), binary)
    await assert.rejects(fs.access(path.join(workspace, 'gone.txt')))
    await assert.rejects(fs.access(path.join(workspace, 'dir')), 'an emptied folder goes too')
  })

  it('refuses, with the list, to merge over a file that changed on disk since the merge started', async (t) => {
    const { lines, live, workspace } = await linesFixture(t, { 'f.txt': 'a\n' })
    await lines.fork({ name: 'x' })
    await (await lines.tree('x')).writeFileAtomic('f.txt', Buffer.from('fork\n'))
    const outcome = await lines.merge('x', {
      onStep: () => undefined,
    })
    assert.equal(outcome.type, 'merged')
    await lines.fork({ name: 'y' })
    await (await lines.tree('y')).writeFileAtomic('f.txt', Buffer.from('fork y\n'))
    const raced = await lines.merge('y', {
      onStep: (step) => {
        if (step === 'planned')
          writeFileSync(path.join(workspace, 'f.txt'), 'typed by the user meanwhile\n')
      },
    })
    assert.deepEqual(raced, { type: 'changed-on-disk', into: 'main', paths: ['f.txt'] })
    assert.equal(await live('f.txt'), 'typed by the user meanwhile\n')
  })

  it('undoes the last merge, unless its files changed since', async (t) => {
    const { lines, live, workspace } = await linesFixture(t, { 'f.txt': 'before\n' })
    await lines.fork({ name: 'x' })
    await (await lines.tree('x')).writeFileAtomic('f.txt', Buffer.from('after\n'))
    await (await lines.tree('x')).writeFileAtomic('added.txt', Buffer.from('new\n'))
    await lines.merge('x')
    const undone = await lines.undoMerge()
    assert.equal(undone.type, 'undone')
    assert.deepEqual(undone.type === 'undone' && undone.paths, ['added.txt', 'f.txt'])
    assert.equal(await live('f.txt'), 'before\n')
    assert.equal(await live('added.txt'), undefined)
    assert.deepEqual(await lines.undoMerge(), { type: 'nothing' })
    await lines.fork({ name: 'y' })
    await (await lines.tree('y')).writeFileAtomic('f.txt', Buffer.from('again\n'))
    await lines.merge('y')
    await fs.writeFile(path.join(workspace, 'f.txt'), 'edited since\n')
    assert.deepEqual(await lines.undoMerge(), { type: 'changed-on-disk', paths: ['f.txt'] })
    assert.equal(await live('f.txt'), 'edited since\n')
  })

  it('after an undone merge, the work goes on in a new open fork of main that merges again', async (t) => {
    const { lines, live, workspace } = await linesFixture(t, {
      'f.txt': 'before\n',
      'gone.txt': 'old\n',
      'other.txt': 'o\n',
    })
    await lines.fork({ name: 'x' })
    const x = await lines.tree('x')
    await x.writeFileAtomic('f.txt', Buffer.from('after\n'))
    await x.writeFileAtomic('run.sh', Buffer.from('#!/bin/sh\n'), { mode: 0o755 })
    await x.remove('gone.txt')
    assert.equal((await lines.merge('x')).type, 'merged')
    const undone = await lines.undoMerge()
    assert.ok(undone.type === 'undone' && undone.reopened !== undefined, JSON.stringify(undone))
    assert.equal(undone.merged, 'x')
    const reopened = undone.reopened
    assert.equal(reopened.name, 'x-1', 'named after the merged fork')
    assert.equal(reopened.parent, 'main')
    assert.equal(reopened.merged, undefined)
    assert.equal(await live('f.txt'), 'before\n', 'main is as before the merge')
    await assert.rejects(
      (await lines.tree('x')).writeFileAtomic('f.txt', Buffer.from('more\n')),
      /merged into main and is read-only/,
      'the merged fork stays read-only',
    )
    assert.deepEqual(
      (await lines.diff(reopened.id)).map(({ path, status }) => ({ path, status })),
      [
        { path: 'f.txt', status: 'modified' },
        { path: 'gone.txt', status: 'deleted' },
        { path: 'run.sh', status: 'added' },
      ],
      'the new fork holds what the merge brought',
    )
    // Main moves on meanwhile; the new fork takes more work and merges it all back.
    await fs.writeFile(path.join(workspace, 'other.txt'), 'changed on main\n')
    await (await lines.tree(reopened.id)).writeFileAtomic('g.txt', Buffer.from('more\n'))
    const again = await lines.merge(reopened.id)
    assert.equal(again.type, 'merged', JSON.stringify(again))
    assert.equal(await live('f.txt'), 'after\n')
    assert.equal(await live('g.txt'), 'more\n')
    assert.equal(await live('gone.txt'), undefined)
    assert.equal(await live('other.txt'), 'changed on main\n', "main's own change is kept")
    assert.equal((await fs.stat(path.join(workspace, 'run.sh'))).mode & 0o111, 0o111)
  })

  it('forks of forks merge into their parent fork, not main', async (t) => {
    const { lines, live } = await linesFixture(t, { 'f.txt': 'a\n' })
    await lines.fork({ name: 'outer' })
    await (await lines.tree('outer')).writeFileAtomic('outer.txt', Buffer.from('o\n'))
    const inner = await lines.fork({ from: 'outer', name: 'inner' })
    assert.equal(inner.parent, (lines.find('outer') as { id: string }).id)
    assert.equal(
      await text(await lines.tree('inner'), 'outer.txt'),
      'o\n',
      'a fork of a fork sees its parent’s writes',
    )
    await (await lines.tree('inner')).writeFileAtomic('inner.txt', Buffer.from('i\n'))
    const outcome = await lines.merge('inner')
    assert.equal(outcome.type === 'merged' && outcome.into, inner.parent)
    assert.equal(await text(await lines.tree('outer'), 'inner.txt'), 'i\n')
    assert.equal(await live('inner.txt'), undefined)
    await assert.rejects(lines.discard('outer'), /has forks of its own/)
    await lines.discard('inner')
    await lines.discard('outer')
    assert.deepEqual(lines.forks(), [])
  })

  it('keeps history readable with plain git', async (t) => {
    const { lines } = await linesFixture(t, { 'f.txt': 'a\n' })
    await lines.fork({ name: 'x' })
    await (await lines.tree('x')).writeFileAtomic('f.txt', Buffer.from('b\n'))
    await lines.merge('x')
    const log = await lines.log('main')
    assert.match(log[0]?.message ?? '', /^merge x into main$/)
    const { execFileSync } = await import('node:child_process')
    const plain = execFileSync(
      'git',
      ['--git-dir', lines.history.gitDir, 'log', '--format=%s', 'refs/eitri/main'],
      { encoding: 'utf8' },
    )
    assert.match(plain, /merge x into main/)
  })

  it('honours the user’s .gitignore: ignored files are not in history', async (t) => {
    const { lines } = await linesFixture(t, {
      '.gitignore': 'node_modules/\n',
      'node_modules/big/index.js': 'x',
      'src/a.ts': 'a',
    })
    await lines.fork({ name: 'x' })
    const tree = await lines.tree('x')
    assert.equal(await tree.stat('node_modules'), undefined)
    assert.equal((await tree.stat('src/a.ts'))?.type, 'file')
  })

  it('snapshots exactly what the file tools see: every folder’s .gitignore, one definition', async (t) => {
    const { lines } = await linesFixture(t, {
      '.gitignore': '*.log\nout/\n',
      'app/.gitignore': '!keep.log\n/cache\n',
      'app/keep.log': 'k',
      'app/drop.log': 'd',
      'app/cache/c.txt': 'c',
      'app/src/cache/s.txt': 's',
      'app/out/o.js': 'o',
      'lib/.gitignore': '!out/\n',
      'lib/out/l.js': 'l',
      'top.log': 't',
    })
    const files = async (tree: WorkspaceTree, gitignore: boolean): Promise<string[]> => {
      const found: string[] = []
      for await (const entry of createWorkspaceView({ tree }).walk('', { gitignore }))
        if (entry.type !== 'directory') found.push(entry.path)
      return found.sort()
    }
    await lines.fork({ name: 'x' })
    const fork = await lines.tree('x')
    const snapshotted = await files(fork, false)
    assert.deepEqual(snapshotted, [
      '.gitignore',
      'app/.gitignore',
      'app/keep.log',
      'app/src/cache/s.txt',
      'lib/.gitignore',
      'lib/out/l.js',
    ])
    assert.deepEqual(await files(lines.main, true), snapshotted)
    // A fork reads its own .gitignore files the same way.
    await fork.writeFileAtomic('app/new.log', Buffer.from('n'))
    assert.deepEqual(await files(fork, true), snapshotted)
    await fork.writeFileAtomic('app/.gitignore', Buffer.from('!*.log\n'))
    assert.ok((await files(fork, true)).includes('app/new.log'))
  })

  it('never touches the user’s own .git', async (t) => {
    const { lines, workspace } = await linesFixture(t, { 'a.txt': 'a' })
    const { execFileSync } = await import('node:child_process')
    execFileSync('git', ['init', '-q', workspace])
    execFileSync('git', ['-C', workspace, 'add', 'a.txt'])
    const gitState = (): string =>
      execFileSync('find', [path.join(workspace, '.git'), '-printf', '%P %s %T@\n'], {
        encoding: 'utf8',
      })
        .split('\n')
        .sort()
        .join('\n')
    const before = gitState()
    await lines.fork({ name: 'x' })
    await (await lines.tree('x')).writeFileAtomic('b.txt', Buffer.from('b'))
    await lines.merge('x')
    assert.equal(
      await (await lines.tree('x')).stat('.git'),
      undefined,
      'the user’s .git is not part of a fork',
    )
    assert.equal(gitState(), before, 'not one file of the user’s .git changed: index, refs, hooks')
    const status = execFileSync('git', ['-C', workspace, 'status', '--porcelain'], {
      encoding: 'utf8',
    })
    assert.equal(
      status,
      'A  a.txt\n?? b.txt\n',
      'the user’s staging is as they left it; the merged file is untracked',
    )
  })

  it('records every write of a fork (path, size, sha256, who, when) and commits with a message', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const fork = await lines.fork({ name: 'logged' })
    await (await lines.tree('logged')).writeFileAtomic('a.txt', Buffer.from('hello'))
    const { readLog } = await import('./fork-tree.ts')
    const [record] = readLog(path.join(stateDir, 'forks', fork.id, 'writes.jsonl'))
    assert.equal(record?.path, 'a.txt')
    assert.equal(record?.size, 5)
    assert.equal(record?.sha256, '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824')
    assert.equal(typeof record?.who, 'string')
    assert.ok(!Number.isNaN(Date.parse(record?.when ?? '')))
    await lines.commit('logged', 'say hello')
    assert.equal((await lines.log('logged'))[0]?.message, 'say hello')
  })

  it('enforces the write quota and read-only forks', async (t) => {
    const { lines } = await linesFixture(t)
    await lines.fork({ name: 'small', quotaBytes: 10 })
    const small = await lines.tree('small')
    await small.writeFileAtomic('a', Buffer.from('12345'))
    await assert.rejects(
      small.writeFileAtomic('b', Buffer.from('123456')),
      (error: unknown) =>
        (error as { code?: string }).code === 'quota_exceeded' && /quota/.test(String(error)),
    )
    await lines.fork({ name: 'frozen', readOnly: true })
    await assert.rejects(
      (await lines.tree('frozen')).writeFileAtomic('a', Buffer.from('x')),
      /read-only/,
    )
  })

  it('never merges a fork’s file at eitri’s own state or configuration into main', async (t) => {
    const { lines, live } = await linesFixture(t, { 'a.txt': 'a\n' }, { excluded: ['.eitri'] })
    await lines.fork({ name: 'sneaky' })
    const tree = await lines.tree('sneaky')
    await tree.writeFileAtomic('.eitri/config.json', Buffer.from('{"rules":{}}'))
    await tree.writeFileAtomic('a.txt', Buffer.from('b\n'))
    await assert.rejects(
      lines.merge('sneaky'),
      (error: unknown) =>
        (error as { code?: string }).code === 'protected_path' &&
        /\.eitri\/config\.json/.test(String(error)),
    )
    assert.equal(await live('.eitri/config.json'), undefined)
    assert.equal(await live('a.txt'), 'a\n', 'nothing of the merge reached main')
    await tree.remove('.eitri/config.json')
    assert.equal((await lines.merge('sneaky')).type, 'merged', 'the rest merges once it is gone')
    assert.equal(await live('a.txt'), 'b\n')
  })
})
