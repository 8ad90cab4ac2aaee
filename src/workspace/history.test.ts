import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { gitCommandsStarted, runGit } from './git/run-git.ts'
import { MAIN_REF, WorkspaceHistory } from './history.ts'

interface Fixture {
  readonly root: string
  readonly workspace: string
  readonly canaries: string
  readonly history: WorkspaceHistory
}

async function fixture(t: TestContext, files: Record<string, string>): Promise<Fixture> {
  const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-history-')))
  const workspace = path.join(root, 'workspace')
  const canaries = path.join(root, 'canaries')
  await fs.mkdir(canaries)
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(workspace, name)), { recursive: true })
    await fs.writeFile(path.join(workspace, name), content)
  }
  const history = await WorkspaceHistory.open({
    stateDir: path.join(root, 'state'),
    workTree: workspace,
  })
  t.after(async () => {
    history.close()
    await fs.rm(root, { recursive: true, force: true })
  })
  return { root, workspace, canaries, history }
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    ['-c', 'user.name=p', '-c', 'user.email=p@p', '-c', 'init.defaultBranch=main', ...args],
    { cwd, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd } },
  ).trim()
}

/**
 * A repository at `folder` with one commit, whose own configuration runs programs writing
 * canaries: an fsmonitor, and a clean filter on every file.
 */
async function plantRepository(fixture: Fixture, folder: string): Promise<void> {
  const repository = path.join(fixture.workspace, folder)
  const name = path.basename(folder)
  await fs.mkdir(repository, { recursive: true })
  git(repository, 'init', '-q')
  await fs.writeFile(path.join(repository, 'keep.txt'), 'kept\n')
  git(repository, 'add', '-A')
  git(repository, 'commit', '-qm', 'code')
  const script = path.join(repository, 'fsmon.sh')
  await fs.writeFile(script, `#!/bin/sh\necho ran >> ${fixture.canaries}/fsmonitor-${name}\n`)
  await fs.chmod(script, 0o755)
  await fs.writeFile(
    path.join(repository, 'clean.sh'),
    `#!/bin/sh\necho ran >> ${fixture.canaries}/filter-${name}\ncat\n`,
  )
  await fs.writeFile(path.join(repository, '.gitattributes'), '* filter=canary\n')
  await fs.appendFile(
    path.join(repository, '.git/config'),
    '[core]\n\tfsmonitor = ./fsmon.sh\n[filter "canary"]\n\tclean = sh ./clean.sh\n',
  )
}

/** Makes `keep.txt` look changed to git (a new time, the same size): a git asking reads it. */
async function touchKept(fixture: Fixture, folder: string, seconds: number): Promise<void> {
  const time = new Date(Date.now() + seconds * 1000)
  await fs.utimes(path.join(fixture.workspace, folder, 'keep.txt'), time, time)
}

function lsTree(history: WorkspaceHistory, tree: string): string {
  return execFileSync('git', ['--git-dir', history.gitDir, 'ls-tree', '-r', tree], {
    encoding: 'utf8',
  })
}

describe("main's tree: nested repositories and paths git refuses", () => {
  it('a repository git meets before eitri knew it is taken out of the index at once, and never entered', async (t) => {
    const f = await fixture(t, { 'lib/a.txt': 'a\n', 'top.txt': 'top\n' })
    await f.history.mainTree()
    // a repository appears in lib, and the watcher names only a file beside it
    await plantRepository(f, 'lib/inner')
    await fs.writeFile(path.join(f.workspace, 'lib/a.txt'), 'a2\n')
    const seen = await f.history.mainTree({ paths: ['lib/a.txt'] })
    // the next looks at lib never enter the repository
    const trees = [seen.tree]
    for (const [round, content] of ['a3\n', 'a4\n'].entries()) {
      await touchKept(f, 'lib/inner', round + 1)
      await fs.writeFile(path.join(f.workspace, 'lib/a.txt'), content)
      trees.push((await f.history.mainTree({ paths: ['lib/a.txt'] })).tree)
    }
    trees.push((await f.history.mainTree()).tree)
    assert.deepEqual(await fs.readdir(f.canaries), [])
    for (const tree of trees) {
      assert.doesNotMatch(lsTree(f.history, tree), /160000|inner/)
      assert.match(lsTree(f.history, tree), /\tlib\/a\.txt$/m)
    }
    assert.deepEqual(seen.skipped, ['lib/inner/'])
  })

  it('an index holding a gitlink (an older eitri, another process) is cleaned before git adds', async (t) => {
    const f = await fixture(t, { 'a.txt': 'a\n' })
    await plantRepository(f, 'sub')
    await f.history.mainTree()
    // Another process leaves a gitlink in the index (as eitri did before it left repositories out)
    const head = git(path.join(f.workspace, 'sub'), 'rev-parse', 'HEAD')
    await runGit(f.history.mainTarget, [
      'update-index',
      '--add',
      '--cacheinfo',
      `160000,${head},sub`,
    ])
    // Positive control: with that index, eitri's own git add enters sub (to ask whether it is
    // dirty) and that git runs sub's filter; the fsmonitor does not run, as eitri's environment
    // sets core.fsmonitor=false, which reaches it, but no setting can name every filter.
    await touchKept(f, 'sub', 1)
    await runGit(f.history.mainTarget, ['add', '--all', '--dry-run', '.'])
    assert.deepEqual(await fs.readdir(f.canaries), ['filter-sub'])
    await fs.rm(path.join(f.canaries, 'filter-sub'))
    // The next snapshot, through a history opened anew (as a new server would), runs nothing.
    f.history.close()
    const history = await WorkspaceHistory.open({
      stateDir: path.dirname(f.history.gitDir),
      workTree: f.workspace,
    })
    t.after(() => history.close())
    await touchKept(f, 'sub', 2)
    await fs.writeFile(path.join(f.workspace, 'a.txt'), 'b\n')
    const seen = await history.mainTree({ paths: ['a.txt'] })
    await touchKept(f, 'sub', 3)
    await fs.writeFile(path.join(f.workspace, 'a.txt'), 'c\n')
    await history.mainTree({ paths: ['a.txt'] })
    assert.deepEqual(await fs.readdir(f.canaries), [])
    assert.doesNotMatch(lsTree(history, seen.tree), /160000/)
    assert.deepEqual(seen.skipped, ['sub/'])
  })

  it("a process's first look skips cleaning the index only while it is as the last look left it", async (t) => {
    const f = await fixture(t, { 'a.txt': 'a\n' })
    await plantRepository(f, 'sub')
    const first = await f.history.mainTree()
    const record = path.join(path.dirname(f.history.gitDir), 'main.index.tree')
    assert.match(await fs.readFile(record, 'utf8'), new RegExp(`\\n${first.tree}\\n$`))
    const reopen = async (): Promise<WorkspaceHistory> => {
      const history = await WorkspaceHistory.open({
        stateDir: path.dirname(f.history.gitDir),
        workTree: f.workspace,
      })
      t.after(() => history.close())
      return history
    }
    const head = git(path.join(f.workspace, 'sub'), 'rev-parse', 'HEAD')
    const plantGitlink = () =>
      runGit(f.history.mainTarget, ['update-index', '--add', '--cacheinfo', `160000,${head},sub`])
    const signatureNow = async (): Promise<string> => {
      const stat = await fs.stat(path.join(path.dirname(f.history.gitDir), 'main.index'))
      return `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`
    }
    // Positive control: a record naming the index as it is now (forged here, after another
    // process planted a gitlink) is trusted, the index is not cleaned, and git add enters sub
    // (to ask whether it is dirty), running sub's filter.
    await plantGitlink()
    await fs.writeFile(record, `${await signatureNow()}\n${first.tree}\n`)
    await touchKept(f, 'sub', 1)
    await fs.writeFile(path.join(f.workspace, 'a.txt'), 'b\n')
    const second = await (await reopen()).mainTree()
    assert.deepEqual(await fs.readdir(f.canaries), ['filter-sub'])
    await fs.rm(path.join(f.canaries, 'filter-sub'))
    // The record as a look left it no longer names the index once another process wrote it:
    // the next process cleans the index first, and nothing runs.
    await plantGitlink()
    await touchKept(f, 'sub', 2)
    await fs.writeFile(path.join(f.workspace, 'a.txt'), 'c\n')
    const third = await (await reopen()).mainTree()
    assert.deepEqual(await fs.readdir(f.canaries), [])
    assert.notEqual(second.tree, third.tree)
    assert.doesNotMatch(lsTree(f.history, third.tree), /160000/)
    assert.deepEqual(third.skipped, ['sub/'])
    // A torn record is ignored the same way.
    await plantGitlink()
    await fs.writeFile(record, `${await signatureNow()}\n${first.tree.slice(0, 20)}`)
    await touchKept(f, 'sub', 3)
    await (await reopen()).mainTree()
    assert.deepEqual(await fs.readdir(f.canaries), [])
  })

  it('a repository whose name is not UTF-8 is left out all the same', async (t) => {
    const f = await fixture(t, { 'a.txt': 'a\n' })
    await f.history.mainTree()
    await plantRepository(f, 'plain')
    // rename it to bytes that are no UTF-8 (git and the file system take any byte but / and NUL)
    const odd = Buffer.concat([Buffer.from(`${f.workspace}/odd-`), Buffer.from([0xff, 0xfe])])
    await fs.rename(path.join(f.workspace, 'plain'), odd)
    await fs.writeFile(path.join(f.workspace, 'a.txt'), 'b\n')
    for (let round = 1; round <= 3; round++) {
      const time = new Date(Date.now() + round * 1000)
      await fs.utimes(Buffer.concat([odd, Buffer.from('/keep.txt')]), time, time)
      const seen = await f.history.mainTree({ paths: ['a.txt'] })
      assert.doesNotMatch(lsTree(f.history, seen.tree), /160000|odd/)
      assert.equal(seen.skipped.length, 1)
    }
    assert.deepEqual(await fs.readdir(f.canaries), [])
  })

  it('a folder replaced by a link: git is never given a path beyond it', async (t) => {
    const f = await fixture(t, { 'a/b/c.txt': 'c\n', 'other/b/c.txt': 'o\n' })
    await f.history.mainTree()
    await f.history.mainTree({ paths: ['a/b/c.txt'] })
    await fs.rm(path.join(f.workspace, 'a'), { recursive: true })
    await fs.symlink('other', path.join(f.workspace, 'a'))
    // the watcher names the old path only (its events for `a` itself came earlier)
    const seen = await f.history.mainTree({ paths: ['a/b/c.txt'] })
    assert.match(lsTree(f.history, seen.tree), /^120000 blob \w+\ta$/m)
  })

  it('a snapshot that cannot be taken fails with git’s reason, and the next one works once the cause is gone', async (t) => {
    const f = await fixture(t, { 'a.txt': 'a\n' })
    await f.history.mainTree()
    const lock = path.join(path.dirname(f.history.gitDir), 'main.index.lock')
    await fs.writeFile(lock, '')
    await fs.writeFile(path.join(f.workspace, 'a.txt'), 'b\n')
    await assert.rejects(f.history.mainTree({ paths: ['a.txt'] }), (error: Error) => {
      assert.match(error.message, /main\.index\.lock': File exists/)
      return true
    })
    await fs.rm(lock)
    const seen = await f.history.mainTree({ paths: [] })
    assert.match(lsTree(f.history, seen.tree), /\ta\.txt$/m)
    const blob = lsTree(f.history, seen.tree).split(/\s+/)[2] ?? ''
    assert.equal(
      execFileSync('git', ['--git-dir', f.history.gitDir, 'cat-file', 'blob', blob], {
        encoding: 'utf8',
      }),
      'b\n',
    )
  })
})

/** git add as a plain history of the folder would run it: a fresh index, no attributes. */
async function plainAdd(f: Fixture, pathspecs: readonly string[]): Promise<number> {
  const gitDir = path.join(f.root, 'plain.git')
  await fs.mkdir(gitDir, { recursive: true })
  await runGit({ gitDir }, ['init', '--quiet', '--bare'])
  const target = { gitDir, workTree: f.workspace, indexFile: path.join(f.root, 'plain.index') }
  let status = 0
  for (const pathspec of pathspecs)
    status = (await runGit(target, ['add', '--all', '--', pathspec], { check: false })).status
  return status
}

describe('workspace content never wedges a snapshot', () => {
  it('a linked worktree whose branch is garbage', async (t) => {
    const f = await fixture(t, { 'a.txt': 'a\n' })
    git(f.workspace, 'init', '-q')
    git(f.workspace, 'add', '-A')
    git(f.workspace, 'commit', '-qm', 'first')
    git(f.workspace, 'worktree', 'add', '-q', '-b', 'feature', 'wt')
    await fs.writeFile(path.join(f.workspace, '.git/refs/heads/feature'), 'garbage\n')
    // Positive control: a plain git add over the folder stops on it.
    assert.notEqual(await plainAdd(f, ['.']), 0)
    await fs.writeFile(path.join(f.workspace, 'a.txt'), 'b\n')
    const seen = await f.history.mainTree()
    assert.match(lsTree(f.history, seen.tree), /\ta\.txt$/m)
    assert.deepEqual(seen.skipped, ['wt/'])
  })

  it('a changed path inside a nested repository', async (t) => {
    const f = await fixture(t, { 'a.txt': 'a\n' })
    await plantRepository(f, 'sub')
    await fs.mkdir(path.join(f.workspace, 'sub/src'))
    await fs.writeFile(path.join(f.workspace, 'sub/src/s.c'), 's\n')
    // Positive control: once a plain history holds the repository, a path inside it stops git.
    assert.notEqual(await plainAdd(f, ['.', 'sub/src']), 0)
    await fs.rm(path.join(f.canaries), { recursive: true })
    await fs.mkdir(f.canaries)
    await f.history.mainTree()
    await fs.writeFile(path.join(f.workspace, 'a.txt'), 'b\n')
    await fs.writeFile(path.join(f.workspace, 'sub/src/s.c'), 's2\n')
    const seen = await f.history.mainTree({ paths: ['a.txt', 'sub/src/s.c'] })
    assert.match(lsTree(f.history, seen.tree), /\ta\.txt$/m)
    assert.doesNotMatch(lsTree(f.history, seen.tree), /sub/)
    assert.deepEqual(await fs.readdir(f.canaries), [])
  })

  it('a working-tree-encoding the bytes do not fit', async (t) => {
    const f = await fixture(t, {
      '.gitattributes': '*.enc working-tree-encoding=UTF-16\n',
      'x.enc': 'abc',
    })
    // Positive control: git honouring the workspace's attributes refuses the file outright.
    assert.notEqual(await plainAdd(f, ['.']), 0)
    const seen = await f.history.mainTree()
    assert.match(lsTree(f.history, seen.tree), /\tx\.enc$/m)
    assert.deepEqual(seen.skipped, [])
  })
})

/** A history opened with its own options, over a folder holding `files`. */
async function openHistory(
  t: TestContext,
  files: Record<string, string | Buffer>,
  options: { excluded?: readonly string[]; maxFileBytes?: number } = {},
) {
  const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-history-')))
  const workspace = path.join(root, 'workspace')
  await fs.mkdir(workspace)
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(workspace, name)), { recursive: true })
    await fs.writeFile(path.join(workspace, name), content)
  }
  const history = await WorkspaceHistory.open({
    stateDir: path.join(root, 'state'),
    workTree: workspace,
    ...options,
  })
  t.after(async () => {
    history.close()
    await fs.rm(root, { recursive: true, force: true })
  })
  /** The blob git stored for `name` in `tree`, as bytes. */
  const stored = (tree: string, name: string): Buffer =>
    execFileSync('git', ['--git-dir', history.gitDir, 'cat-file', 'blob', `${tree}:${name}`])
  return { workspace, history, stored }
}

describe('snapshots of main', () => {
  it('commits main when it changed and only then, each snapshot on top of the last', async (t) => {
    const { workspace, history } = await openHistory(t, { 'a.txt': 'a\n' })
    assert.equal(await history.readRef(MAIN_REF), undefined)
    const first = await history.snapshotMain({ message: 'first' })
    assert.equal(await history.readRef(MAIN_REF), first.commit)
    assert.equal(await history.treeOf(first.commit), first.tree)
    assert.equal((await history.snapshotMain()).commit, first.commit, 'nothing changed')
    await fs.writeFile(path.join(workspace, 'b.txt'), 'b\n')
    const second = await history.snapshotMain()
    assert.notEqual(second.commit, first.commit)
    assert.equal(
      execFileSync('git', ['--git-dir', history.gitDir, 'rev-parse', `${second.commit}^`], {
        encoding: 'utf8',
      }).trim(),
      first.commit,
    )
    assert.deepEqual(
      lsTree(history, second.tree)
        .trim()
        .split('\n')
        .map((line) => line.split('\t')[1]),
      ['a.txt', 'b.txt'],
    )
    assert.match(
      execFileSync('git', ['--git-dir', history.gitDir, 'log', '--format=%s', MAIN_REF], {
        encoding: 'utf8',
      }),
      /^snapshot of main\nfirst\n$/,
    )
  })

  it('a look limited to paths sees what changed there; an empty list of paths skips git', async (t) => {
    const { workspace, history, stored } = await openHistory(t, { 'a.txt': 'a\n', 'd/b.txt': 'b' })
    const first = await history.snapshotMain()
    await fs.writeFile(path.join(workspace, 'd/b.txt'), 'changed')
    assert.equal((await history.snapshotMain({ paths: [] })).commit, first.commit)
    const seen = await history.snapshotMain({ paths: ['d/b.txt'] })
    assert.notEqual(seen.commit, first.commit)
    assert.equal(stored(seen.tree, 'd/b.txt').toString(), 'changed')
  })

  it('a look at a folder that did not change runs one git process, and sees every kind of change', async (t) => {
    const { workspace, history, stored } = await openHistory(t, {
      'a.txt': 'a\n',
      'gone.txt': 'g\n',
      'tool.sh': 'echo\n',
      'd/b.txt': 'b',
    })
    const first = await history.snapshotMain()
    const before = gitCommandsStarted()
    assert.equal((await history.mainTree()).tree, first.tree)
    assert.equal(gitCommandsStarted() - before, 1, 'only the listing of what changed')
    // Positive controls: each kind of change is seen and stored.
    await fs.rm(path.join(workspace, 'gone.txt'))
    const deleted = await history.mainTree()
    assert.throws(() => stored(deleted.tree, 'gone.txt'))
    await fs.chmod(path.join(workspace, 'tool.sh'), 0o755)
    const executable = await history.mainTree()
    assert.match(lsTree(history, executable.tree), /^100755 blob \S+\ttool\.sh$/m)
    await fs.writeFile(path.join(workspace, 'd/b.txt'), 'c')
    const modified = await history.mainTree()
    assert.equal(stored(modified.tree, 'd/b.txt').toString(), 'c')
    await fs.writeFile(path.join(workspace, 'd/new.txt'), 'n')
    const added = await history.mainTree()
    assert.equal(stored(added.tree, 'd/new.txt').toString(), 'n')
    assert.equal(new Set([first, deleted, executable, modified, added].map((s) => s.tree)).size, 5)
  })

  it('leaves out excluded paths and files over the size bound, listing the latter', async (t) => {
    const { history } = await openHistory(
      t,
      { 'a.txt': 'a\n', '.eitri/state.json': '{}', 'big.bin': Buffer.alloc(2048, 1) },
      { excluded: ['.eitri'], maxFileBytes: 1024 },
    )
    const snapshot = await history.snapshotMain()
    assert.deepEqual(
      lsTree(history, snapshot.tree)
        .trim()
        .split('\n')
        .map((line) => line.split('\t')[1]),
      ['a.txt'],
    )
    assert.deepEqual(snapshot.skipped, ['big.bin'])
  })

  it("stores a file's bytes as they are, whatever the workspace's attributes say", async (t) => {
    const crlf = Buffer.from('one\r\ntwo\r\n')
    const { history, stored } = await openHistory(t, {
      '.gitattributes': '* text eol=lf\n*.txt ident\n',
      'a.txt': crlf,
      'id.txt': '$Id: kept as written $\n',
    })
    const snapshot = await history.snapshotMain()
    assert.deepEqual(stored(snapshot.tree, 'a.txt'), crlf)
    assert.equal(stored(snapshot.tree, 'id.txt').toString(), '$Id: kept as written $\n')
  })
})

describe('references of the history', () => {
  it('moves a reference only from what the caller saw, and reads or deletes it', async (t) => {
    const { history } = await openHistory(t, { 'a.txt': 'a\n' })
    const tree = (await history.snapshotMain()).tree
    const one = history.commit(tree, [], 'one', new Date('2026-01-01T00:00:00Z'))
    const two = history.commit(tree, [one], 'two')
    const ref = 'refs/eitri/forks/f-00000001'
    await history.updateRef(ref, one)
    assert.equal(await history.readRef(ref), one)
    await assert.rejects(history.updateRef(ref, two), 'it exists: creating it again fails')
    await assert.rejects(history.updateRef(ref, two, two), 'it names one, not two')
    assert.equal(await history.readRef(ref), one)
    await history.updateRef(ref, two, one)
    assert.equal(await history.readRef(ref), two)
    execFileSync('git', ['--git-dir', history.gitDir, 'pack-refs', '--all'])
    assert.equal(await history.readRef(ref), two, 'a packed reference is read through git')
    await history.deleteRef(ref)
    assert.equal(await history.readRef(ref), undefined)
    await history.deleteRef(ref)
  })
})

describe('main moved under a snapshot', () => {
  it('by another process (a merge) between the look and the move: the snapshot is taken on top of it', async (t) => {
    const f = await fixture(t, { 'a.txt': 'a\n' })
    const first = await f.history.snapshotMain()
    const merged = f.history.commit(first.tree, [first.commit], 'a merge elsewhere')
    const move = f.history.updateRef.bind(f.history)
    let moves = 0
    // Main moves right before this snapshot's own move, as another process's merge would.
    f.history.updateRef = async (ref, commit, expected) => {
      if (moves++ === 0)
        await runGit({ gitDir: f.history.gitDir }, ['update-ref', MAIN_REF, merged])
      return move(ref, commit, expected)
    }
    await fs.writeFile(path.join(f.workspace, 'b.txt'), 'b\n')
    const snapshot = await f.history.snapshotMain({ paths: ['b.txt'] })
    assert.equal(await f.history.readRef(MAIN_REF), snapshot.commit)
    const parents = await runGit({ gitDir: f.history.gitDir }, [
      'rev-parse',
      `${snapshot.commit}^@`,
    ])
    assert.equal(parents.stdout.toString().trim(), merged)
    assert.match(lsTree(f.history, snapshot.tree), /\tb\.txt$/m)
  })
})

describe('another history on the same state', () => {
  it('looked last: a look that saw nothing change takes the index it left, never drops its files', async (t) => {
    const f = await fixture(t, { 'a.txt': 'a\n' })
    const other = await WorkspaceHistory.open({
      stateDir: path.join(f.root, 'state'),
      workTree: f.workspace,
    })
    t.after(() => other.close())
    await f.history.snapshotMain()
    await fs.writeFile(path.join(f.workspace, 'b.txt'), 'b\n')
    const theirs = await other.snapshotMain({ paths: ['b.txt'] })
    // This process's watcher has not seen b.txt (another process wrote it): nothing changed.
    const mine = await f.history.snapshotMain({ paths: [] })
    assert.equal(mine.tree, theirs.tree)
    assert.equal(await f.history.readRef(MAIN_REF), theirs.commit)
    assert.deepEqual((await f.history.mainTree({ paths: [] })).tree, theirs.tree)
  })
})

/** Opens the history of argv[1] on state argv[2] when told (a line on stdin); prints the outcome. */
const OPENER = `
import { WorkspaceHistory } from ${JSON.stringify(new URL('./history.ts', import.meta.url).pathname)}
const [workTree, stateDir] = process.argv.slice(1)
console.log('ready')
process.stdin.once('data', async () => {
  try {
    const history = await WorkspaceHistory.open({ stateDir, workTree })
    history.close()
    console.log('opened')
  } catch (error) {
    console.log(String(error))
  }
})
`

/** Starts an opener; resolves with its process, once it is ready. */
async function opener(workTree: string, stateDir: string) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', OPENER, workTree, stateDir], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  const ended = new Promise<string>((resolve) => child.once('exit', () => resolve(out)))
  while (!out.includes('ready')) await new Promise((resolve) => setTimeout(resolve, 10))
  return { go: () => child.stdin.end('\n'), ended }
}

describe('a new state opened by several processes at once', () => {
  it('opens whole for each of them, and leaves nothing aside', async (t) => {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-history-race-'))
    t.after(() => fs.rm(base, { recursive: true, force: true }))
    const workTree = path.join(base, 'work')
    await fs.mkdir(workTree)
    await fs.writeFile(path.join(workTree, 'a.txt'), 'a\n')
    // Servers started together: each waits at a barrier, then all open the new state at once.
    for (let round = 0; round < 3; round++) {
      const stateDir = path.join(base, `state-${round}`)
      const openers = await Promise.all(Array.from({ length: 6 }, () => opener(workTree, stateDir)))
      for (const { go } of openers) go()
      const outputs = await Promise.all(openers.map(({ ended }) => ended))
      assert.deepEqual(
        outputs,
        outputs.map(() => 'ready\nopened\n'),
      )
      assert.deepEqual(await fs.readdir(stateDir), ['history.git'])
      const history = await WorkspaceHistory.open({ stateDir, workTree })
      t.after(() => history.close())
      const snapshot = await history.snapshotMain()
      assert.equal(await history.readRef(MAIN_REF), snapshot.commit)
    }
  })
})
