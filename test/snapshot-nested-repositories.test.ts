/**
 * eitri's own git over the user's folder (the snapshot of main taken around every call) never
 * runs anything the workspace or a repository nested in it configures, never wedges on one
 * path, and stores bytes as they are. Each case drives a real workshop (with a watcher, as
 * `eitri serve` runs, and without, as one-shot commands do) and real git; the attacks are
 * judged by canaries outside the workspace, beside a positive control showing that git's
 * default behaviour does run the planted programs.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import type { SnapshotRecord } from '../src/workspace/snapshot-record.ts'
import { openWorkshop, type Workshop } from '../src/workshop/workshop.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

/** The two ways a workshop takes snapshots: a server's watcher, and none (`eitri call`). */
const MODES = [
  { name: 'without a watcher', watch: false },
  { name: 'with a watcher (eitri serve)', watch: true },
] as const

async function open(scratch: Scratch, watch: boolean): Promise<Workshop> {
  const workshop = await openWorkshop({
    workspace: scratch.workspace,
    stateDir: scratch.stateDir,
    configPath: scratch.configPath,
    approver: async () => ({ type: 'approved', by: 'test' }),
    watch,
  })
  await workshop.lines.snapshots.settled()
  return workshop
}

/** git as a person runs it: no global or system configuration, a fixed identity. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    [
      '-c',
      'user.name=person',
      '-c',
      'user.email=person@example.invalid',
      '-c',
      'protocol.file.allow=always',
      '-c',
      'init.defaultBranch=main',
      ...args,
    ],
    {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
    },
  ).trim()
}

async function newest(workshop: Workshop): Promise<SnapshotRecord> {
  const record = (await workshop.lines.snapshots.list())[0]
  assert.ok(record, 'a snapshot was taken')
  return record
}

/** A file's bytes as a snapshot holds them; undefined when it holds none. */
function bytesAt(workshop: Workshop, record: SnapshotRecord, file: string): Buffer | undefined {
  try {
    return execFileSync(
      'git',
      [
        '--git-dir',
        workshop.lines.history.gitDir,
        'cat-file',
        'blob',
        `${record.commit}:files/${file}`,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    )
  } catch {
    return undefined
  }
}

/** The entries of a snapshot's files under `folder` (`git ls-tree`'s lines). */
function entriesAt(workshop: Workshop, record: SnapshotRecord, folder = ''): string {
  return execFileSync(
    'git',
    [
      '--git-dir',
      workshop.lines.history.gitDir,
      'ls-tree',
      '-r',
      `${record.commit}:files${folder === '' ? '' : `/${folder}`}`,
    ],
    { encoding: 'utf8' },
  )
}

async function write(workshop: Workshop, file: string, content: string): Promise<void> {
  const result = await workshop.call('write_file', { path: file, content })
  assert.equal(result.type, 'success', `write_file ${file}: ${result.content}`)
}

/**
 * A user repository at the workspace's root holding a submodule `lib` (its `.git` a file, its
 * repository in `.git/modules/lib`) and an embedded repository `vendor/tool` (its own `.git`
 * folder), each configured to run a program that writes a canary outside the workspace: an
 * fsmonitor, and a clean filter on every file.
 */
async function plantRepositories(scratch: Scratch): Promise<{ canaries: string }> {
  const canaries = path.join(scratch.root, 'canaries')
  await fs.mkdir(canaries)
  const upstream = path.join(scratch.root, 'upstream')
  await fs.mkdir(upstream)
  git(upstream, 'init', '-q')
  await fs.writeFile(path.join(upstream, 'code.txt'), 'library\n')
  await fs.writeFile(path.join(upstream, 'keep.txt'), 'kept\n')
  git(upstream, 'add', '-A')
  git(upstream, 'commit', '-qm', 'library')

  const workspace = scratch.workspace
  git(workspace, 'init', '-q')
  await fs.writeFile(path.join(workspace, 'README.md'), 'readme\n')
  git(workspace, 'submodule', '--quiet', 'add', upstream, 'lib')
  await fs.mkdir(path.join(workspace, 'vendor/tool'), { recursive: true })
  git(path.join(workspace, 'vendor/tool'), 'init', '-q')
  await fs.writeFile(path.join(workspace, 'vendor/tool/main.c'), 'int main;\n')
  await fs.writeFile(path.join(workspace, 'vendor/tool/keep.txt'), 'kept\n')
  git(path.join(workspace, 'vendor/tool'), 'add', '-A')
  git(path.join(workspace, 'vendor/tool'), 'commit', '-qm', 'tool')
  git(workspace, 'add', '-A')
  git(workspace, 'commit', '-qm', 'first')

  for (const [name, folder, gitDir] of [
    ['lib', 'lib', '.git/modules/lib'],
    ['tool', 'vendor/tool', 'vendor/tool/.git'],
  ] as const) {
    // What an agent writes: two scripts inside the nested repository...
    const fsmonitor = path.join(workspace, folder, 'fsmon.sh')
    await fs.writeFile(fsmonitor, `#!/bin/sh\necho ran > ${canaries}/fsmonitor-${name}\n`)
    await fs.chmod(fsmonitor, 0o755)
    await fs.writeFile(
      path.join(workspace, folder, 'clean.sh'),
      `#!/bin/sh\necho ran > ${canaries}/filter-${name}\ncat\n`,
    )
    await fs.writeFile(path.join(workspace, folder, '.gitattributes'), '* filter=canary\n')
    // ...and the nested repository's own configuration naming them.
    const config = path.join(workspace, gitDir, 'config')
    await fs.appendFile(
      config,
      '[core]\n\tfsmonitor = ./fsmon.sh\n[filter "canary"]\n\tclean = sh ./clean.sh\n',
    )
  }
  return { canaries }
}

/**
 * Makes each nested repository's `keep.txt` look changed to git (a new time, the same size),
 * so a git asking whether the repository is dirty reads it through the clean filter.
 */
async function touchKept(scratch: Scratch, seconds: number): Promise<void> {
  const time = new Date(Date.now() + seconds * 1000)
  for (const folder of ['lib', 'vendor/tool'])
    await fs.utimes(path.join(scratch.workspace, folder, 'keep.txt'), time, time)
}

describe("eitri's snapshots never run what a nested repository configures", () => {
  for (const mode of MODES) {
    it(`a submodule and an embedded repository with an fsmonitor and a filter: no canary (${mode.name})`, async () => {
      await using scratch = await makeScratch()
      const { canaries } = await plantRepositories(scratch)
      let entries: string | undefined
      let skipped: readonly string[] | undefined
      let note: Buffer | undefined
      {
        await using workshop = await open(scratch, mode.watch)
        for (let round = 0; round < 3; round++) {
          await write(workshop, `note-${round}.txt`, `round ${round}\n`)
          // change files inside the nested repositories: git would re-examine them
          await fs.appendFile(path.join(scratch.workspace, 'lib/code.txt'), `${round}\n`)
          await fs.appendFile(path.join(scratch.workspace, 'vendor/tool/main.c'), `${round}\n`)
          await touchKept(scratch, round + 1)
        }
        const record = await newest(workshop)
        entries = entriesAt(workshop, record)
        skipped = record.skipped
        note = bytesAt(workshop, record, 'note-2.txt')
      }
      // a second server over the same state (its index already made) still runs nothing
      {
        await using workshop = await open(scratch, mode.watch)
        // the nested repositories' .git change (without running their git, which would run
        // their programs itself)
        const tool = path.join(scratch.workspace, 'vendor/tool/.git/refs/heads')
        await fs.copyFile(path.join(tool, 'main'), path.join(tool, 'other'))
        await fs.appendFile(path.join(scratch.workspace, 'vendor/tool/main.c'), 'again\n')
        await fs.appendFile(path.join(scratch.workspace, '.git/modules/lib/description'), 'x\n')
        await write(workshop, 'again.txt', 'again\n')
      }
      assert.deepEqual(await fs.readdir(canaries), [], 'no program of a nested repository ran')
      // Nested repositories are left out of main's snapshots, and listed.
      assert.ok(entries !== undefined && skipped !== undefined)
      assert.doesNotMatch(entries, /\tlib\b|vendor\/tool/)
      assert.deepEqual(
        skipped.filter((file) => file.endsWith('/')),
        ['lib/', 'vendor/tool/'],
      )
      assert.ok(note, 'the other files are snapshotted')

      // Positive control: git's default behaviour (a plain `git status` in the user's
      // repository) does run both nested repositories' programs.
      await touchKept(scratch, 10)
      git(scratch.workspace, 'status', '--porcelain')
      assert.deepEqual((await fs.readdir(canaries)).sort(), [
        'filter-lib',
        'filter-tool',
        'fsmonitor-lib',
        'fsmonitor-tool',
      ])
    })
  }
})

describe('no path wedges the snapshots of main', () => {
  for (const mode of MODES) {
    it(`a nested repository's .git changing between servers (${mode.name})`, async () => {
      await using scratch = await makeScratch({ 'a.txt': 'a\n' })
      const nested = path.join(scratch.workspace, 'vendor/lib')
      await fs.mkdir(nested, { recursive: true })
      git(nested, 'init', '-q')
      await fs.writeFile(path.join(nested, 'x.c'), 'x\n')
      git(nested, 'add', '-A')
      git(nested, 'commit', '-qm', 'x')
      {
        await using workshop = await open(scratch, mode.watch)
        await write(workshop, 'a.txt', 'one\n')
      }
      await using workshop = await open(scratch, mode.watch)
      await write(workshop, 'a.txt', 'two\n')
      // the watcher sees paths inside vendor/lib/.git and vendor/lib/src, not vendor/lib's own
      await fs.mkdir(path.join(nested, 'src'))
      await fs.writeFile(path.join(nested, 'src/y.c'), 'y\n')
      git(nested, 'add', '-A')
      git(nested, 'commit', '-qm', 'y')
      await write(workshop, 'a.txt', 'three\n')
      await write(workshop, 'a.txt', 'four\n')
      const record = await newest(workshop)
      assert.equal(bytesAt(workshop, record, 'a.txt')?.toString(), 'four\n')
      assert.deepEqual(record.skipped, ['vendor/lib/'])
      assert.doesNotMatch(entriesAt(workshop, record), /vendor/)
    })

    it(`writes into a linked worktree, and its branch made garbage (${mode.name})`, async () => {
      await using scratch = await makeScratch({ 'a.txt': 'a\n' })
      git(scratch.workspace, 'init', '-q')
      git(scratch.workspace, 'add', '-A')
      git(scratch.workspace, 'commit', '-qm', 'first')
      git(scratch.workspace, 'worktree', 'add', '-q', '-b', 'feature', 'wt')
      await using workshop = await open(scratch, mode.watch)
      await write(workshop, 'a.txt', 'one\n')
      await fs.mkdir(path.join(scratch.workspace, 'wt/.husky'))
      await fs.writeFile(path.join(scratch.workspace, 'wt/.husky/pre-commit'), 'exit 0\n')
      await write(workshop, 'a.txt', 'two\n')
      // an agent's write inside the worktree (the path policy may refuse it; the snapshots
      // around the call must not fail either way)
      await fs.mkdir(path.join(scratch.workspace, 'wt/docs'))
      const evaluated = await workshop.call('js_eval', {
        code: "await fs.writeFile('wt/docs/notes.md', 'notes\\n')",
      })
      assert.doesNotMatch(evaluated.content, /could not snapshot/)
      await fs.writeFile(path.join(scratch.workspace, '.git/refs/heads/feature'), 'garbage\n')
      await write(workshop, 'a.txt', 'three\n')
      await fs.writeFile(path.join(scratch.workspace, 'wt/new.txt'), 'new\n')
      await write(workshop, 'a.txt', 'four\n')
      const record = await newest(workshop)
      assert.equal(bytesAt(workshop, record, 'a.txt')?.toString(), 'four\n')
      assert.ok(record.skipped.includes('wt/'), `wt/ is listed: ${record.skipped.join(', ')}`)
    })

    it(`a working-tree-encoding the bytes do not fit (${mode.name})`, async () => {
      await using scratch = await makeScratch({ 'a.txt': 'a\n' })
      await using workshop = await open(scratch, mode.watch)
      await write(workshop, '.gitattributes', '*.enc working-tree-encoding=UTF-16\n')
      await write(workshop, 'x.enc', 'abc')
      await write(workshop, 'a.txt', 'after\n')
      const record = await newest(workshop)
      assert.equal(bytesAt(workshop, record, 'x.enc')?.toString(), 'abc', 'stored as they are')
    })

    it(`writes inside an ignored folder (${mode.name})`, async () => {
      await using scratch = await makeScratch({ '.gitignore': 'node_modules\n', 'a.txt': 'a\n' })
      await using workshop = await open(scratch, mode.watch)
      await write(workshop, 'a.txt', 'one\n')
      await fs.mkdir(path.join(scratch.workspace, 'node_modules/pkg'), { recursive: true })
      await fs.writeFile(path.join(scratch.workspace, 'node_modules/pkg/index.js'), 'x\n')
      await write(workshop, 'a.txt', 'two\n')
      await fs.writeFile(path.join(scratch.workspace, 'node_modules/pkg/more.js'), 'y\n')
      await write(workshop, 'a.txt', 'three\n')
      const record = await newest(workshop)
      assert.equal(bytesAt(workshop, record, 'a.txt')?.toString(), 'three\n')
      assert.deepEqual(record.skipped, [])
      assert.doesNotMatch(entriesAt(workshop, record), /node_modules/)
    })

    it(`paths git cannot store are left out and listed, then taken again once fixed (${mode.name})`, async () => {
      await using scratch = await makeScratch({ 'a.txt': 'a\n' })
      await using workshop = await open(scratch, mode.watch)
      await write(workshop, 'a.txt', 'one\n')
      // a folder named like git's own, in another case, and a .gitmodules that is a link
      await fs.mkdir(path.join(scratch.workspace, 'd/.GIT'), { recursive: true })
      await fs.writeFile(path.join(scratch.workspace, 'd/.GIT/config'), 'x\n')
      await fs.symlink('a.txt', path.join(scratch.workspace, '.gitmodules'))
      await write(workshop, 'a.txt', 'two\n')
      let record = await newest(workshop)
      assert.equal(bytesAt(workshop, record, 'a.txt')?.toString(), 'two\n')
      assert.deepEqual(record.skipped, ['.gitmodules', 'd/.GIT/config'])
      await fs.rm(path.join(scratch.workspace, 'd/.GIT'), { recursive: true })
      await fs.mkdir(path.join(scratch.workspace, 'd/ok'))
      await fs.writeFile(path.join(scratch.workspace, 'd/ok/config'), 'ok\n')
      await fs.rm(path.join(scratch.workspace, '.gitmodules'))
      await write(workshop, 'a.txt', 'three\n')
      record = await newest(workshop)
      assert.deepEqual(record.skipped, [])
      assert.equal(bytesAt(workshop, record, 'd/ok/config')?.toString(), 'ok\n')
    })
  }
})

describe('restore and nested repositories', () => {
  it('never deletes or writes inside a folder that was a nested repository then, or is now', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'a\n' })
    const tool = path.join(scratch.workspace, 'tool')
    await fs.mkdir(tool)
    git(tool, 'init', '-q')
    await fs.writeFile(path.join(tool, 'main.c'), 'int main;\n')
    git(tool, 'add', '-A')
    git(tool, 'commit', '-qm', 'tool')
    await using workshop = await open(scratch, false)
    await write(workshop, 'a.txt', 'one\n')
    const before = (await workshop.lines.snapshots.list()).reverse()[0]
    assert.ok(before)
    assert.deepEqual(before.skipped, ['tool/'])
    // the agent turns the repository into a plain folder: its files are snapshotted now
    await fs.rm(path.join(tool, '.git'), { recursive: true })
    await write(workshop, 'a.txt', 'two\n')
    assert.equal(
      bytesAt(workshop, await newest(workshop), 'tool/main.c')?.toString(),
      'int main;\n',
    )
    const restored = await workshop.call('workspace_restore', { snapshot: before.id, force: true })
    assert.equal(restored.type, 'success', restored.content)
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'a.txt'), 'utf8'), 'a\n')
    assert.equal(await fs.readFile(path.join(tool, 'main.c'), 'utf8'), 'int main;\n')
    assert.match(restored.content, /Left alone .*tool\/main\.c/)
  })
})

describe('snapshots store bytes as they are', () => {
  it("a restore brings back CRLF and $Id$ bytes exactly under the workspace's attributes", async () => {
    const crlf = 'one\r\ntwo\r\n'
    const ident = 'version $Id: 0123456789abcdef $\n'
    await using scratch = await makeScratch({
      '.gitattributes': '* text eol=lf ident\n',
      'data.bin': crlf,
      'id.txt': ident,
    })
    await using workshop = await open(scratch, false)
    await write(workshop, 'data.bin', 'changed\n')
    await write(workshop, 'id.txt', 'changed\n')
    const before = (await workshop.lines.snapshots.list()).reverse()[0]
    assert.ok(before)
    assert.equal(bytesAt(workshop, before, 'data.bin')?.toString(), crlf)
    const restored = await workshop.call('workspace_restore', { snapshot: before.id })
    assert.equal(restored.type, 'success', restored.content)
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'data.bin'), 'utf8'), crlf)
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'id.txt'), 'utf8'), ident)
  })
})
