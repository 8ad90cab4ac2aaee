import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { before, describe, it } from 'node:test'
import { EitriError } from '../../errors/eitri-error.ts'
import { DirectoryTree } from '../../workspace/directory-tree.ts'
import { createWorkspaceView, type ConfinedWorkspace } from '../confined-workspace.ts'
import { RepositoryPrograms } from './repository-programs.ts'

const git = (cwd: string, ...args: string[]): void =>
  void execFileSync('git', args, {
    cwd,
    env: { PATH: process.env['PATH'], GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  })

function put(root: string, relative: string, content = 'x\n'): void {
  fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true })
  fs.writeFileSync(path.join(root, relative), content)
}

/**
 * A workspace like a real one: a repository whose configuration names a hooks folder and
 * programs, a nested repository, a bare fixture repository, folders that are almost
 * repositories, and a global configuration with a relative hooks path.
 */
async function workspace(): Promise<{ root: string; view: ConfinedWorkspace }> {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-git-write-')))
  const root = path.join(base, 'work')
  fs.mkdirSync(root)
  git(root, 'init', '-q')
  git(root, 'config', 'core.hooksPath', '.hooks')
  git(root, 'config', 'core.fsmonitor', 'tools/fsmonitor.sh')
  git(root, 'config', 'core.pager', 'less -R')
  git(root, 'config', 'alias.x', '!scripts/x.sh --flag')
  git(root, 'config', 'filter.lfs.clean', '"tools/clean filter" %f')
  git(root, 'config', 'credential.helper', '/usr/bin/elsewhere')
  git(root, 'config', 'include.path', '../.gitconfig.extra')
  put(root, '.gitconfig.extra', '[include]\n\tpath = config/more.gitconfig\n')
  put(root, 'config/more.gitconfig', '[diff "img"]\n\ttextconv = bin/img2txt\n')
  fs.mkdirSync(path.join(root, 'vendor/lib'), { recursive: true })
  git(path.join(root, 'vendor/lib'), 'init', '-q')
  git(path.join(root, 'vendor/lib'), 'config', 'core.hooksPath', 'hooks')
  git(base, 'init', '-q', '--bare', path.join(root, 'fixtures/repo.git'))
  for (const folder of ['half/objects', 'half/refs'])
    fs.mkdirSync(path.join(root, folder), { recursive: true })
  put(root, 'common/HEAD', 'ref: refs/heads/main\n')
  put(root, 'headrefs/HEAD', 'ref: refs/heads/main\n')
  fs.mkdirSync(path.join(root, 'headrefs/refs'))
  const global = path.join(base, 'global.gitconfig')
  fs.writeFileSync(global, '[core]\n\thooksPath = git-hooks\n')
  const repositories = new RepositoryPrograms({ root, globalConfigs: [global] })
  const view = createWorkspaceView({
    tree: new DirectoryTree(root),
    programs: (workTrees) => repositories.programPaths(workTrees),
  })
  return { root, view }
}

async function decision(view: ConfinedWorkspace, target: string): Promise<string> {
  try {
    return `allowed ${await view.resolve(target, 'write')}`
  } catch (error) {
    if (EitriError.isInstance(error)) return `${error.code}: ${error.message}`
    throw error
  }
}

describe('the git rule of the path policy', () => {
  let fixture: { root: string; view: ConfinedWorkspace }
  before(async () => {
    fixture = await workspace()
  })

  const refused: [string, RegExp][] = [
    ['.git', /repository's own folder/],
    ['vendor/lib/.git', /repository's own folder/],
    ['.git/config', /only objects, refs/],
    ['.git/hooks/pre-commit', /only objects, refs/],
    ['.git/commondir', /only objects, refs/],
    ['.git/objects/info/alternates', /only objects, refs/],
    ['.git/modules/m/config', /only objects, refs/],
    ['.git/worktrees/w/gitdir', /only objects, refs/],
    ['.git/description', /only objects, refs/],
    ['vendor/lib/.git/config', /only objects, refs/],
    ['sub/.git/HEAD', /would create a repository \(sub\/\.git\)/],
    ['sub/.git', /repository's own folder/],
    ['deep/new/.git/config', /would create a repository/],
    ['fixtures/repo.git/config', /inside a repository folder \(fixtures\/repo\.git\)/],
    ['fixtures/repo.git/hooks/post-update', /inside a repository folder/],
    ['half/HEAD', /would make half a repository/],
    ['common/commondir', /would make common a repository/],
    ['headrefs/objects/pack/p.pack', /would make headrefs a repository/],
    ['.hooks/pre-commit', /core\.hookspath/],
    ['.hooks', /core\.hookspath/],
    ['tools/fsmonitor.sh', /core\.fsmonitor/],
    ['scripts/x.sh', /alias\.x/],
    ['tools/clean filter', /filter\.lfs\.clean/],
    ['.gitconfig.extra', /include\.path/],
    ['config/more.gitconfig', /include\.path/],
    ['bin/img2txt', /diff\.img\.textconv/],
    ['vendor/lib/hooks/post-checkout', /core\.hookspath/],
    ['git-hooks/pre-push', /core\.hookspath/],
    ['vendor/lib/git-hooks/pre-push', /core\.hookspath/],
  ]
  for (const [target, reason] of refused) {
    it(`refuses ${target}`, async () => {
      const answer = await decision(fixture.view, target)
      assert.match(answer, /^protected_path: /)
      assert.match(answer, reason)
    })
  }

  // Positive controls: ordinary files, and what local git work writes, stay writable.
  const allowed = [
    'src/a.ts',
    'README.md',
    '.gitignore',
    '.git/refs/heads/topic',
    '.git/objects/ab/cdef',
    '.git/logs/HEAD',
    '.git/index',
    '.git/HEAD',
    '.git/MERGE_MSG',
    '.git/ORIG_HEAD',
    '.git/packed-refs',
    'vendor/lib/.git/refs/heads/x',
    'vendor/lib/src/a.c',
    'fixtures/repo.git/refs/heads/x',
    'fixtures/repo.git/objects/aa/bb',
    'half/notes.txt',
    'half/objects/x',
    'common/notes.txt',
    'common/objects/x',
    '.hooks-notes.md',
    'tools/other.sh',
    'scripts/y.sh',
    'less',
  ]
  for (const target of allowed) {
    it(`allows ${target}`, async () => {
      assert.equal(await decision(fixture.view, target), `allowed ${target}`)
    })
  }

  it('follows a change of the configuration: a new hooks path is protected, the old one freed', async () => {
    assert.match(await decision(fixture.view, '.hooks/pre-commit'), /^protected_path/)
    git(fixture.root, 'config', 'core.hooksPath', '.hooks2')
    assert.equal(await decision(fixture.view, '.hooks/pre-commit'), 'allowed .hooks/pre-commit')
    assert.match(await decision(fixture.view, '.hooks2/pre-commit'), /core\.hookspath/)
    git(fixture.root, 'config', 'core.hooksPath', '.hooks')
  })

  it('refuses the same paths for removal and for links', async () => {
    await assert.rejects(fixture.view.remove('.git/config'), /protected/)
    await assert.rejects(fixture.view.createSymlink('.hooks/pre-commit', 'x'), /core\.hookspath/)
    await assert.rejects(fixture.view.makeFolder('sub/.git'), /repository's own folder/)
  })
})

describe('the git rule reaches every repository that names code in the workspace', () => {
  async function viewOf(root: string): Promise<ConfinedWorkspace> {
    const repositories = new RepositoryPrograms({ root })
    return createWorkspaceView({
      tree: new DirectoryTree(root),
      programs: (workTrees) => repositories.programPaths(workTrees),
    })
  }
  const base = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-git-reach-')))

  it('a linked worktree and a submodule (their .git is a file): their hooks paths', async () => {
    const root = path.join(base(), 'w')
    fs.mkdirSync(root)
    git(root, 'init', '-q', '-b', 'main')
    git(
      root,
      '-c',
      'user.name=p',
      '-c',
      'user.email=p@e',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'x',
    )
    git(root, 'config', 'core.hooksPath', '.hooks')
    git(root, 'worktree', 'add', '-q', 'wt', '-b', 'feature')
    const view = await viewOf(root)
    assert.match(await decision(view, 'wt/.hooks/pre-commit'), /core\.hookspath/)
    assert.match(await decision(view, '.hooks/pre-commit'), /core\.hookspath/)
    assert.equal(await decision(view, 'wt/src.ts'), 'allowed wt/src.ts')
  })

  it('the repository the workspace lies in (a folder of a monorepo)', async () => {
    const mono = path.join(base(), 'mono')
    fs.mkdirSync(path.join(mono, 'frontend'), { recursive: true })
    git(mono, 'init', '-q')
    git(mono, 'config', 'core.hooksPath', 'frontend/.hooks/_')
    const view = await viewOf(path.join(mono, 'frontend'))
    assert.match(await decision(view, '.hooks/_/pre-commit'), /core\.hookspath/)
    assert.equal(await decision(view, 'src/readme.md'), 'allowed src/readme.md')
  })

  it('husky 9 in a folder of its own (`tools/hooks/_`): the scripts beside the stubs', async () => {
    const root = path.join(base(), 'w')
    fs.mkdirSync(root)
    git(root, 'init', '-q')
    git(root, 'config', 'core.hooksPath', 'tools/hooks/_')
    const view = await viewOf(root)
    assert.match(await decision(view, 'tools/hooks/pre-commit'), /core\.hookspath/)
    assert.match(await decision(view, 'tools/hooks/_/h'), /core\.hookspath/)
    assert.equal(await decision(view, 'tools/build.sh'), 'allowed tools/build.sh')
  })

  it('a global configuration inside the workspace, missing or not, names hooks too', async () => {
    const root = path.join(base(), 'w')
    fs.mkdirSync(root)
    git(root, 'init', '-q')
    const xdg = path.join(root, 'xdg/git/config')
    const repositories = new RepositoryPrograms({ root, globalConfigs: [xdg] })
    const view = createWorkspaceView({
      tree: new DirectoryTree(root),
      programs: (workTrees) => repositories.programPaths(workTrees),
    })
    assert.match(await decision(view, 'xdg/git/config'), /a git configuration file/)
    assert.equal(await decision(view, 'xdg/git/ignore'), 'allowed xdg/git/ignore')
  })

  it('a nested repository whose hooks path lies outside its own folder', async () => {
    const root = path.join(base(), 'w')
    fs.mkdirSync(path.join(root, 'nested'), { recursive: true })
    git(path.join(root, 'nested'), 'init', '-q')
    git(path.join(root, 'nested'), 'config', 'core.hooksPath', '../tools/hooks')
    const view = await viewOf(root)
    assert.match(await decision(view, 'tools/hooks/pre-commit'), /core\.hookspath/)
    assert.equal(await decision(view, 'tools/other.sh'), 'allowed tools/other.sh')
  })

  it('a hooks path reached through a link protects the folder it leads to', async () => {
    const root = path.join(base(), 'w')
    fs.mkdirSync(path.join(root, 'scripts/git-hooks'), { recursive: true })
    fs.symlinkSync('scripts/git-hooks', path.join(root, '.githooks'))
    git(root, 'init', '-q')
    git(root, 'config', 'core.hooksPath', '.githooks')
    const view = await viewOf(root)
    assert.match(await decision(view, 'scripts/git-hooks/pre-commit'), /core\.hookspath/)
    assert.equal(await decision(view, 'scripts/other.sh'), 'allowed scripts/other.sh')
  })

  it('a folder inside .git completed into a repository of its own', async () => {
    const root = path.join(base(), 'w')
    fs.mkdirSync(root)
    git(root, 'init', '-q')
    fs.mkdirSync(path.join(root, '.git/refs/x/objects'), { recursive: true })
    fs.mkdirSync(path.join(root, '.git/refs/x/refs'), { recursive: true })
    const view = await viewOf(root)
    assert.match(await decision(view, '.git/refs/x/HEAD'), /would make \.git\/refs\/x a repository/)
    assert.equal(await decision(view, '.git/refs/heads/x'), 'allowed .git/refs/heads/x')
  })
})
