/**
 * A fork as its programs see it: main's folder below (its ignored files, its `.git`), the
 * fork's own changes above, and main's changes since the fork masked. So a fork runs what
 * main runs; what git writes in the fork stays there.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { committedProject, openJailedWorkshop } from './helpers/committed-project.ts'
import { gitOk } from './helpers/git-repository.ts'
import type { Scratch } from './helpers/scratch.ts'

/** A small project: a repository, tracked sources, and an ignored node_modules. */
function project(): Promise<Scratch> {
  return committedProject({
    '.gitignore': 'node_modules/\ndist/\n',
    'README.md': 'readme\n',
    'src/a.js': 'module.exports = "main v1"\n',
    'src/keep.js': 'keep\n',
    'node_modules/dep/index.js': 'module.exports = "dep"\n',
    'node_modules/dep/package.json': '{"name":"dep","main":"index.js"}\n',
  })
}

/** What a command printed, without the exit line a shell answer ends with. */
const printed = (answer: { content: string }) => `${answer.content.replace(/\n*\[exit 0\]$/, '')}\n`

const live = (scratch: Scratch, name: string) =>
  fs.readFile(path.join(scratch.workspace, name), 'utf8').catch(() => undefined)

describe('a fork’s layers', () => {
  it('show main’s ignored files and .git below the fork, and mask main’s later changes', async () => {
    await using scratch = await project()
    await using workshop = await openJailedWorkshop(scratch)
    assert.equal((await workshop.call('workspace_fork', { name: 'f' })).type, 'success')
    // Main moves on after the fork: a change, an addition (a whole new folder), a deletion.
    await fs.writeFile(path.join(scratch.workspace, 'src/a.js'), 'module.exports = "main v2"\n')
    await fs.writeFile(path.join(scratch.workspace, 'src/b.js'), 'only on main\n')
    await fs.mkdir(path.join(scratch.workspace, 'extra'))
    await fs.writeFile(path.join(scratch.workspace, 'extra/x.txt'), 'only on main\n')
    await fs.rm(path.join(scratch.workspace, 'README.md'))
    await workshop.call('workspace_use', { fork: 'f' })
    const ran = await workshop.call('shell', {
      command:
        'node -e \'console.log(require("dep"), require("./src/a.js"))\'; ls -A; ls src; git log --format=%s',
    })
    assert.equal(ran.type, 'success', ran.content)
    assert.equal(
      printed(ran),
      [
        'dep main v1',
        '.git',
        '.gitignore',
        'README.md',
        'node_modules',
        'src',
        'a.js',
        'keep.js',
        'first',
        '',
      ].join('\n'),
    )
    // The positive control: main itself shows its changes.
    await workshop.call('workspace_use', { fork: 'main' })
    const onMain = await workshop.call('shell', { command: 'ls -A; ls src' })
    assert.equal(
      printed(onMain),
      ['.git', '.gitignore', 'extra', 'node_modules', 'src', 'a.js', 'b.js', 'keep.js', ''].join(
        '\n',
      ),
    )
  })

  it('keep a fork’s ignored files (build outputs, packages) in its jail, out of its changes', async () => {
    await using scratch = await project()
    await using workshop = await openJailedWorkshop(scratch)
    await workshop.call('workspace_fork', { name: 'f' })
    await workshop.call('workspace_use', { fork: 'f' })
    const built = await workshop.call('shell', {
      command:
        'mkdir dist && echo out > dist/x.js && rm -r node_modules/dep && mkdir node_modules/other && echo o > node_modules/other/i.js && echo tracked > src/t.js',
    })
    assert.equal(built.type, 'success', built.content)
    // The model is told, once per path, what stays in the jail and for how long.
    assert.match(
      built.content,
      /\[kept in the jail: dist: ignored by a \.gitignore[^\]]*kept with the fork, also when eitri restarts/,
    )
    assert.match(built.content, /\[kept in the jail: node_modules: ignored/)
    const again = await workshop.call('shell', { command: 'echo more >> dist/x.js' })
    assert.doesNotMatch(again.content, /kept in the jail/, again.content)
    assert.equal(
      printed(await workshop.call('shell', { command: 'cat dist/x.js; ls node_modules; ls src' })),
      'out\nmore\nother\na.js\nkeep.js\nt.js\n',
    )
    // Not the fork's changes: only the tracked file is.
    const diff = await workshop.call('workspace_diff', { fork: 'f' })
    assert.match(diff.content, /src\/t\.js/)
    assert.doesNotMatch(diff.content, /dist|node_modules/)
    // Main never sees them, and keeps its own.
    await assert.rejects(fs.stat(path.join(scratch.workspace, 'dist')))
    await assert.rejects(fs.stat(path.join(scratch.workspace, 'node_modules/other')))
    assert.equal(await live(scratch, 'node_modules/dep/index.js'), 'module.exports = "dep"\n')
    // Lists of a line's files leave out what git leaves out, on main as in the fork.
    const mainFiles = await workshop.call('room_files', { fork: 'main' })
    assert.equal(mainFiles.content, '.gitignore\nREADME.md\nsrc/a.js\nsrc/keep.js')
  })

  it('bring a fork’s own writes and deletions back into the fork, each command on the last', async () => {
    await using scratch = await project()
    await using workshop = await openJailedWorkshop(scratch)
    await workshop.call('workspace_fork', { name: 'f' })
    await workshop.call('workspace_use', { fork: 'f' })
    const first = await workshop.call('shell', {
      command: 'echo fork > src/a.js && rm README.md && mkdir -p lib && echo new > lib/n.js',
    })
    assert.equal(first.type, 'success', first.content)
    const second = await workshop.call('shell', {
      command: 'cat src/a.js lib/n.js; ls -A; git status --porcelain',
    })
    assert.equal(second.type, 'success', second.content)
    const lines = second.content.split('\n')
    assert.deepEqual(lines.slice(0, 2), ['fork', 'new'])
    assert.ok(!lines.includes('README.md'), second.content)
    assert.ok(lines.includes(' M src/a.js'), second.content)
    assert.ok(lines.includes(' D README.md'), second.content)
    assert.ok(lines.includes('?? lib/'), second.content)
    assert.equal((await workshop.call('read_file', { path: 'src/a.js' })).content, 'fork\n')
    // Main is untouched, its ignored files too.
    assert.equal(await live(scratch, 'src/a.js'), 'module.exports = "main v1"\n')
    assert.equal(await live(scratch, 'README.md'), 'readme\n')
    assert.equal(await live(scratch, 'node_modules/dep/index.js'), 'module.exports = "dep"\n')
    // A write on the fork's files from a tool reaches the next command too.
    await workshop.call('write_file', { path: 'src/a.js', content: 'from a tool\n' })
    assert.equal(
      printed(await workshop.call('shell', { command: 'cat src/a.js' })),
      'from a tool\n',
    )
    // Written back again: the layer is rewritten, not left stale.
    await workshop.call('shell', { command: 'echo again > src/a.js && rm lib/n.js' })
    assert.equal(
      printed(await workshop.call('shell', { command: 'cat src/a.js; ls' })),
      'again\nnode_modules\nsrc\n',
    )
  })

  it('keep what git writes in the fork there: main’s repository never changes', async () => {
    await using scratch = await project()
    await using workshop = await openJailedWorkshop(scratch)
    const git = (...args: string[]) => gitOk(scratch.workspace, args)
    const mainHead = git('rev-parse', 'HEAD')
    await workshop.call('workspace_fork', { name: 'f' })
    await workshop.call('workspace_use', { fork: 'f' })
    // git's configuration is refused, and the refusal says how to commit under a name.
    const configured = await workshop.call('shell', { command: 'git config user.name a' })
    assert.equal(configured.type, 'error')
    assert.match(configured.content, /GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL/)
    const committed = await workshop.call('shell', {
      command:
        'echo fork > src/a.js && GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@e GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@e git commit -qam "in the fork" && git branch side && git log --format=%s',
    })
    assert.equal(committed.type, 'success', committed.content)
    assert.match(committed.content, /^in the fork\nfirst\n/)
    assert.match(committed.content, /\[kept in the jail: \.git: git's own files/)
    const later = await workshop.call('shell', {
      command:
        'git log --format=%s; git branch --format="%(refname:short)"; git status --porcelain',
    })
    assert.equal(later.type, 'success', later.content)
    assert.equal(printed(later), 'in the fork\nfirst\nmain\nside\n')
    // Renaming a branch main's repository has: its old name stays gone in the fork.
    const renamed = await workshop.call('shell', { command: 'git branch -m main trunk' })
    assert.equal(renamed.type, 'success', renamed.content)
    assert.equal(
      printed(await workshop.call('shell', { command: 'git branch --format="%(refname:short)"' })),
      'side\ntrunk\n',
    )
    // Main's repository: the same commit, the same branches, nothing from the fork.
    assert.equal(git('rev-parse', 'HEAD'), mainHead)
    assert.equal(git('branch', '--format=%(refname:short)'), 'main')
    assert.equal(git('status', '--porcelain'), '')
    // The fork's files are the fork's; its `.git` is not among them.
    const diff = await workshop.call('workspace_diff', { fork: 'f' })
    assert.equal(diff.type, 'success', diff.content)
    assert.match(diff.content, /src\/a\.js/)
    assert.doesNotMatch(diff.content, /\.git\//)
  })
})
