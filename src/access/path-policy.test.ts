import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { EitriError } from '../errors/eitri-error.ts'
import { DirectoryTree } from '../workspace/directory-tree.ts'
import { decidePath, type PathIntent, type PathPolicyOptions } from './path-policy.ts'
import { homeProtectedPaths, protectedPathMatcher } from './protected-paths.ts'
import { createWorkspaceView } from './confined-workspace.ts'

/** One per-test temporary folder: `root` is the workspace, `outside` a sibling beside it. */
interface Fixture {
  readonly base: string
  readonly root: string
  readonly outside: string
}

async function makeFixture(t: TestContext): Promise<Fixture> {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-policy-')))
  t.after(() => fs.rm(base, { recursive: true, force: true }))
  const root = path.join(base, 'workspace')
  const outside = path.join(base, 'outside')
  await fs.mkdir(root)
  await fs.mkdir(outside)
  await fs.writeFile(path.join(outside, 'secret.txt'), 'SECRET\n')
  return { base, root, outside }
}

async function put(root: string, relative: string, content = 'text\n'): Promise<void> {
  await fs.mkdir(path.dirname(path.join(root, relative)), { recursive: true })
  await fs.writeFile(path.join(root, relative), content)
}

async function link(root: string, relative: string, target: string): Promise<void> {
  await fs.mkdir(path.dirname(path.join(root, relative)), { recursive: true })
  await fs.symlink(target, path.join(root, relative))
}

/** The workspace most cases run against; `state` stands for eitri's own state. */
async function buildLayout({ root, outside }: Fixture): Promise<void> {
  await put(root, 'a/b.txt')
  await put(root, 'b')
  await put(root, 'docs/readme.md')
  await put(root, '.git/config', '[core]\n')
  await fs.mkdir(path.join(root, '.git/hooks'))
  await put(root, 'state/runs.db')
  await link(root, 'inside-dir', 'docs')
  await link(root, 'inside-file', 'docs/readme.md')
  await link(root, 'a/up-and-over', '../docs/readme.md')
  await link(root, 'chain-1', 'chain-2')
  await link(root, 'chain-2', 'docs')
  await link(root, 'absolute-inside', path.join(root, 'docs'))
  await link(root, 'mount-absolute', '/workspace/docs')
  await link(root, 'out-file', path.join(outside, 'secret.txt'))
  await link(root, 'out-dir', '/etc')
  await link(root, 'out-dangling', '/nonexistent-eitri/x')
  await link(root, 'a/climb', '../../..')
  await link(root, 'relative-out', '../outside/secret.txt')
  await link(root, 'loop-a', 'loop-b')
  await link(root, 'loop-b', 'loop-a')
  await link(root, 'self', 'self')
  await link(root, 'hooks', '.git/hooks')
  await link(root, 'to-state', 'state')
}

/** The same policy `createWorkspaceView` builds, for calling `decidePath` directly. */
function policyFor(fixture: Fixture): PathPolicyOptions {
  const tree = new DirectoryTree(fixture.root)
  return {
    lookup: tree,
    hostRoots: [tree.root],
    isProtected: protectedPathMatcher(),
    hidden: ['state'],
  }
}

type DeniedCode = 'path_outside_workspace' | 'protected_path' | 'invalid_input'
type Expected = { readonly allowed: string } | { readonly denied: DeniedCode }

const allow = (path: string): Expected => ({ allowed: path })
const OUTSIDE: Expected = { denied: 'path_outside_workspace' }
const PROTECTED: Expected = { denied: 'protected_path' }
const INVALID: Expected = { denied: 'invalid_input' }

/** A row: what it shows, the input (or how to build it from the fixture), intent, decision. */
type Case = readonly [
  name: string,
  input: string | ((fixture: Fixture) => string),
  intent: PathIntent | 'both',
  expected: Expected,
]

const CASES: readonly Case[] = [
  // Relative paths inside, canonicalised.
  ['a plain relative file', 'a/b.txt', 'both', allow('a/b.txt')],
  ['./a/../b is b', './a/../b', 'both', allow('b')],
  ['the empty path is the root', '', 'read', allow('')],
  ['. is the root', '.', 'read', allow('')],
  ['doubled slashes and . components', 'a//./b.txt', 'both', allow('a/b.txt')],
  ['a new file in a new folder', 'new/deeper/file.txt', 'both', allow('new/deeper/file.txt')],
  ['.. inside a missing folder', 'missing/../b', 'both', allow('b')],
  // Escaping by `..` or by an absolute path.
  ['.. above the root', '..', 'both', OUTSIDE],
  ['../ to a sibling', '../outside/secret.txt', 'both', OUTSIDE],
  ['climbing back after a detour', 'a/../../workspace/b', 'both', OUTSIDE],
  ['/etc/passwd', '/etc/passwd', 'both', OUTSIDE],
  ['a sibling whose name extends the root', ({ root }) => `${root}-evil/x`, 'both', OUTSIDE],
  // Absolute paths naming the workspace.
  ['the real host path of a file', ({ root }) => `${root}/a/b.txt`, 'both', allow('a/b.txt')],
  ['the real host path of the root', ({ root }) => root, 'read', allow('')],
  ['the host path with a trailing slash', ({ root }) => `${root}/`, 'read', allow('')],
  ['the host path then ..', ({ root }) => `${root}/../outside/secret.txt`, 'both', OUTSIDE],
  ['/workspace/x as an alias', '/workspace/a/b.txt', 'both', allow('a/b.txt')],
  ['/workspace as the root', '/workspace', 'read', allow('')],
  ['/workspace/.. is outside', '/workspace/../etc/passwd', 'both', OUTSIDE],
  ['/workspacex is not the mount', '/workspacex/a/b.txt', 'both', OUTSIDE],
  // Symbolic links out.
  ['a final link to an outside file', 'out-file', 'both', OUTSIDE],
  ['an intermediate link to /etc', 'out-dir/passwd', 'both', OUTSIDE],
  ['a link to /etc itself', 'out-dir', 'both', OUTSIDE],
  ['a dangling link whose target is outside', 'out-dangling', 'both', OUTSIDE],
  ['a relative link that climbs out', 'a/climb', 'both', OUTSIDE],
  ['a path below a climbing link', 'a/climb/etc/passwd', 'both', OUTSIDE],
  ['a relative link to a sibling file', 'relative-out', 'both', OUTSIDE],
  ['a link out, after .. from a missing folder', 'missing/../out-dir/passwd', 'both', OUTSIDE],
  ['a file link out, after .. from missing folders', 'missing/x/../../out-file', 'both', OUTSIDE],
  [
    'an absolute link to /workspace (not the mount on the host)',
    'mount-absolute/x',
    'both',
    OUTSIDE,
  ],
  // Symbolic links that stay inside are followed.
  ['a folder link inside', 'inside-dir/readme.md', 'both', allow('docs/readme.md')],
  ['a file link inside', 'inside-file', 'both', allow('docs/readme.md')],
  ['a link with .. that stays inside', 'a/up-and-over', 'both', allow('docs/readme.md')],
  ['a chain of links', 'chain-1/readme.md', 'both', allow('docs/readme.md')],
  [
    'an absolute link to the host path inside',
    'absolute-inside/readme.md',
    'both',
    allow('docs/readme.md'),
  ],
  ['.. after a folder link pops the real position', 'inside-dir/../b', 'both', allow('b')],
  // Loops are refused, not followed forever.
  ['a two-link loop', 'loop-a', 'both', INVALID],
  ['a self loop as a folder', 'self/x', 'both', INVALID],
  // eitri's own state is neither readable nor writable.
  ['a file of the private state', 'state/runs.db', 'both', PROTECTED],
  ['the private state folder', 'state', 'both', PROTECTED],
  ['a new file in the private state', 'state/new.txt', 'both', PROTECTED],
  ['the private state through a link', 'to-state/runs.db', 'both', PROTECTED],
  ['the private state by host path', ({ root }) => `${root}/state/runs.db`, 'both', PROTECTED],
  [
    'a sibling whose name extends the private state',
    'state-other/x',
    'both',
    allow('state-other/x'),
  ],
  // Protected for writing through a link; readable.
  ['hooks -> .git/hooks, then hooks/pre-commit', 'hooks/pre-commit', 'write', PROTECTED],
  ['hooks -> .git/hooks is readable', 'hooks/pre-commit', 'read', allow('.git/hooks/pre-commit')],
  ['hooks after .. from a missing folder', 'missing/../hooks/pre-commit', 'write', PROTECTED],
  // Bytes no path may hold.
  ['a NUL byte', 'a/b.txt\0.png', 'both', INVALID],
]

function intentsOf(intent: PathIntent | 'both'): PathIntent[] {
  return intent === 'both' ? ['read', 'write'] : [intent]
}

async function assertRejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(EitriError.isInstance(error), `expected an EitriError, got ${String(error)}`)
    assert.equal(error.code, code)
    return true
  })
}

describe('decidePath over a real folder', () => {
  for (const [name, makeInput, intents, expected] of CASES) {
    for (const intent of intentsOf(intents)) {
      it(`${intent}: ${name}`, async (t) => {
        const fixture = await makeFixture(t)
        await buildLayout(fixture)
        const input = typeof makeInput === 'string' ? makeInput : makeInput(fixture)
        const decision = await decidePath(policyFor(fixture), input, intent)
        const view = createWorkspaceView({
          tree: new DirectoryTree(fixture.root),
          privatePaths: [path.join(fixture.root, 'state')],
        })
        if ('allowed' in expected) {
          assert.deepEqual(decision, { type: 'allowed', path: expected.allowed })
          assert.equal(await view.resolve(input, intent), expected.allowed)
        } else {
          assert.equal(decision.type, 'denied')
          assert.equal(decision.type === 'denied' && decision.code, expected.denied)
          await assertRejectsWith(view.resolve(input, intent), expected.denied)
        }
      })
    }
  }
})

describe('refusals through the view act on nothing', () => {
  it('does not read an outside file reached after .. from a missing folder', async (t) => {
    const fixture = await makeFixture(t)
    await link(fixture.root, 'out', fixture.outside)
    const view = createWorkspaceView({ tree: new DirectoryTree(fixture.root) })
    await assertRejectsWith(view.readFile('missing/../out/secret.txt'), 'path_outside_workspace')
    await assertRejectsWith(view.stat('missing/../out/secret.txt'), 'path_outside_workspace')
  })

  it('names the link that leads out, and never the host path', async (t) => {
    const fixture = await makeFixture(t)
    await buildLayout(fixture)
    const decision = await decidePath(policyFor(fixture), 'out-dir/passwd', 'read')
    assert.equal(decision.type, 'denied')
    const reason = decision.type === 'denied' ? decision.reason : ''
    assert.match(reason, /through the symbolic link out-dir/)
    assert.ok(!reason.includes(fixture.base), reason)
  })
})

/** Every built-in pattern, by a path that matches it. */
const PROTECTED_EXAMPLES: readonly string[] = [
  '.git/hooks/pre-commit',
  '.git/config',
  '.git/info/exclude',
  '.git',
  '.gitmodules',
  '.envrc',
  '.vscode/settings.json',
  '.idea/x.xml',
  '.mcp.json',
  '.claude/settings.json',
  '.codex/config.toml',
  '.cursor/mcp.json',
]

describe('protected paths', () => {
  for (const example of PROTECTED_EXAMPLES) {
    for (const exists of [false, true]) {
      it(`${example} (${exists ? 'existing' : 'not yet existing'}): write refused, read allowed`, async (t) => {
        const fixture = await makeFixture(t)
        if (exists) await put(fixture.root, example)
        const view = createWorkspaceView({ tree: new DirectoryTree(fixture.root) })
        await assertRejectsWith(view.resolve(example, 'write'), 'protected_path')
        await assertRejectsWith(view.writeFile(example, 'pwned'), 'protected_path')
        assert.equal(await view.resolve(example, 'read'), example)
        if (exists)
          assert.equal(await fs.readFile(path.join(fixture.root, example), 'utf8'), 'text\n')
        else await assert.rejects(fs.lstat(path.join(fixture.root, example)), { code: 'ENOENT' })
      })
    }
  }

  const writeCases: readonly (readonly [name: string, input: string, expected: Expected])[] = [
    ['nested .git hooks', 'sub/.git/hooks/x', PROTECTED],
    ['nested .vscode', 'deep/er/.vscode/settings.json', PROTECTED],
    ['nested .envrc', 'services/api/.envrc', PROTECTED],
    ['.GIT/hooks in capitals', '.GIT/hooks/x', PROTECTED],
    ['.Vscode in mixed case', '.Vscode/settings.json', PROTECTED],
    ['.ENVRC in capitals', '.ENVRC', PROTECTED],
    ['a protected path written as ./.git/config', './.git/config', PROTECTED],
    ['a protected path reached by ..', 'src/../.git/config', PROTECTED],
    ['a protected path by /workspace', '/workspace/.mcp.json', PROTECTED],
    ['.gitignore is not protected', '.gitignore', allow('.gitignore')],
    ['.github is not protected', '.github/workflows/ci.yml', allow('.github/workflows/ci.yml')],
    ['.envrc.example is not protected', '.envrc.example', allow('.envrc.example')],
    ['a folder named git is not protected', 'src/git/config', allow('src/git/config')],
  ]
  for (const [name, input, expected] of writeCases) {
    it(`write: ${name}`, async (t) => {
      const fixture = await makeFixture(t)
      const decision = await decidePath(
        {
          lookup: new DirectoryTree(fixture.root),
          hostRoots: [fixture.root],
          isProtected: protectedPathMatcher(),
        },
        input,
        'write',
      )
      if ('allowed' in expected)
        assert.deepEqual(decision, { type: 'allowed', path: expected.allowed })
      else assert.equal(decision.type === 'denied' && decision.code, expected.denied)
    })
  }

  it('refuses a write through hooks -> .git/hooks and leaves the hooks folder empty', async (t) => {
    const fixture = await makeFixture(t)
    await fs.mkdir(path.join(fixture.root, '.git/hooks'), { recursive: true })
    await link(fixture.root, 'hooks', '.git/hooks')
    const view = createWorkspaceView({ tree: new DirectoryTree(fixture.root) })
    await assertRejectsWith(view.writeFile('hooks/pre-commit', '#!/bin/sh\n'), 'protected_path')
    assert.deepEqual(await fs.readdir(path.join(fixture.root, '.git/hooks')), [])
    assert.equal(await view.resolve('hooks/pre-commit', 'read'), '.git/hooks/pre-commit')
  })

  it('refuses a write through a link named .envrc, though its target is ordinary', async (t) => {
    const fixture = await makeFixture(t)
    await put(fixture.root, 'notes.txt', 'notes\n')
    await link(fixture.root, '.envrc', 'notes.txt')
    const view = createWorkspaceView({ tree: new DirectoryTree(fixture.root) })
    await assertRejectsWith(view.resolve('.envrc', 'write'), 'protected_path')
    assert.equal(await view.resolve('notes.txt', 'write'), 'notes.txt')
    assert.equal(await view.resolve('.envrc', 'read'), 'notes.txt')
  })

  it('refuses a write through a chain of links passing a protected link', async (t) => {
    const fixture = await makeFixture(t)
    await put(fixture.root, 'notes.txt', 'notes\n')
    await link(fixture.root, '.envrc', 'notes.txt')
    await link(fixture.root, 'alias', '.envrc')
    const view = createWorkspaceView({ tree: new DirectoryTree(fixture.root) })
    await assertRejectsWith(view.writeFile('alias', 'export X=1\n'), 'protected_path')
    assert.equal(await fs.readFile(path.join(fixture.root, 'notes.txt'), 'utf8'), 'notes\n')
    assert.equal(await view.resolve('alias', 'read'), 'notes.txt')
  })

  it('names the matching rule and says what to do', async (t) => {
    const fixture = await makeFixture(t)
    await put(fixture.root, '.git/config', '[core]\n')
    const decision = await decidePath(
      {
        lookup: new DirectoryTree(fixture.root),
        hostRoots: [fixture.root],
        isProtected: protectedPathMatcher(),
      },
      '.git/hooks/x',
      'write',
    )
    assert.equal(decision.type, 'denied')
    const reason = decision.type === 'denied' ? decision.reason : ''
    assert.match(reason, /inside a repository folder \(\.git\) only objects, refs/)
    assert.match(reason, /Ask the user/)
    const named = await decidePath(
      {
        lookup: new DirectoryTree(fixture.root),
        hostRoots: [fixture.root],
        isProtected: protectedPathMatcher(),
      },
      '.vscode/tasks.json',
      'write',
    )
    assert.match(named.type === 'denied' ? named.reason : '', /rule "\.vscode\/\*\*"/)
  })

  const configured: readonly (readonly [input: string, intent: PathIntent, expected: Expected])[] =
    [
      ['secrets/key.pem', 'write', PROTECTED],
      ['secrets/deep/key.pem', 'write', PROTECTED],
      ['SECRETS/key.pem', 'write', PROTECTED],
      ['secrets/key.pem', 'read', allow('secrets/key.pem')],
      ['sub/secrets/key.pem', 'write', allow('sub/secrets/key.pem')],
      ['secrets-public/a', 'write', allow('secrets-public/a')],
    ]
  for (const [input, intent, expected] of configured) {
    it(`configured secrets/**: ${intent} ${input}`, async (t) => {
      const fixture = await makeFixture(t)
      const view = createWorkspaceView({
        tree: new DirectoryTree(fixture.root),
        protectedPaths: ['secrets/**'],
      })
      if ('allowed' in expected) assert.equal(await view.resolve(input, intent), expected.allowed)
      else await assertRejectsWith(view.resolve(input, intent), expected.denied)
    })
  }

  it('does not protect configured patterns in a view configured without them', async (t) => {
    const fixture = await makeFixture(t)
    const view = createWorkspaceView({ tree: new DirectoryTree(fixture.root) })
    assert.equal(await view.resolve('secrets/key.pem', 'write'), 'secrets/key.pem')
  })
})

describe('private paths', () => {
  async function privateFixture(t: TestContext): Promise<Fixture> {
    const fixture = await makeFixture(t)
    await put(fixture.root, 'src/main.ts', 'main\n')
    await put(fixture.root, '.eitri-state/workspaces/w/runs.db', 'db\n')
    await put(fixture.root, '.eitri-state/config.json', '{}\n')
    return fixture
  }

  it('refuses reads and writes of the state folder, by any spelling', async (t) => {
    const fixture = await privateFixture(t)
    await link(fixture.root, 'peek', '.eitri-state/workspaces')
    const view = createWorkspaceView({
      tree: new DirectoryTree(fixture.root),
      privatePaths: [path.join(fixture.root, '.eitri-state')],
    })
    for (const input of [
      '.eitri-state/config.json',
      './.eitri-state/workspaces/w/runs.db',
      '/workspace/.eitri-state/config.json',
      `${fixture.root}/.eitri-state`,
      'src/../.eitri-state/new.txt',
      'peek/w/runs.db',
    ]) {
      for (const intent of ['read', 'write'] as const) {
        await assertRejectsWith(view.resolve(input, intent), 'protected_path')
      }
    }
    await assertRejectsWith(view.readFile('.eitri-state/config.json'), 'protected_path')
    await assertRejectsWith(view.writeFile('.eitri-state/config.json', 'x'), 'protected_path')
    assert.equal(
      await fs.readFile(path.join(fixture.root, '.eitri-state/config.json'), 'utf8'),
      '{}\n',
    )
    assert.equal(await view.resolve('src/main.ts', 'write'), 'src/main.ts')
  })

  it('never shows the state folder in walk', async (t) => {
    const fixture = await privateFixture(t)
    const view = createWorkspaceView({
      tree: new DirectoryTree(fixture.root),
      privatePaths: [path.join(fixture.root, '.eitri-state')],
    })
    const walked: string[] = []
    for await (const entry of view.walk('')) walked.push(entry.path)
    assert.deepEqual(walked, ['src', 'src/main.ts'])
  })

  it('shows the same folder in walk when it is not private', async (t) => {
    const fixture = await privateFixture(t)
    const view = createWorkspaceView({ tree: new DirectoryTree(fixture.root) })
    const walked: string[] = []
    for await (const entry of view.walk('')) walked.push(entry.path)
    assert.ok(walked.includes('.eitri-state/config.json'), walked.join(', '))
  })

  it('ignores private paths outside the workspace', async (t) => {
    const fixture = await privateFixture(t)
    const view = createWorkspaceView({
      tree: new DirectoryTree(fixture.root),
      privatePaths: [fixture.outside, path.join(fixture.base, 'workspace-other')],
    })
    assert.equal(await view.resolve('.eitri-state/config.json', 'read'), '.eitri-state/config.json')
  })
})

describe('host aliases', () => {
  it('accepts absolute paths under an alias of the root, such as the path the user gave', async (t) => {
    const fixture = await makeFixture(t)
    await put(fixture.root, 'a.txt')
    const given = path.join(fixture.base, 'given')
    await fs.symlink(fixture.root, given)
    const view = createWorkspaceView({ tree: new DirectoryTree(given), aliases: [given] })
    assert.equal(await view.resolve(`${given}/a.txt`, 'read'), 'a.txt')
    assert.equal(await view.resolve(`${fixture.root}/a.txt`, 'read'), 'a.txt')
    assert.equal(
      view.redact(`at ${given}/a.txt and ${fixture.root}/a.txt`),
      'at /workspace/a.txt and /workspace/a.txt',
    )
  })

  it('refuses the alias when it is not configured', async (t) => {
    const fixture = await makeFixture(t)
    const given = path.join(fixture.base, 'given')
    await fs.symlink(fixture.root, given)
    const view = createWorkspaceView({ tree: new DirectoryTree(given) })
    await assertRejectsWith(view.resolve(`${given}/a.txt`, 'read'), 'path_outside_workspace')
  })
})

describe('links the view writes lead inside the workspace on the host', () => {
  it('writes an absolute link into the workspace (host path or /workspace) relative to its folder', async (t) => {
    const fixture = await makeFixture(t)
    await put(fixture.root, 'docs/readme.md')
    const view = createWorkspaceView({ tree: new DirectoryTree(fixture.root) })
    await view.createSymlink('a/by-mount', '/workspace/docs/readme.md')
    await view.createSymlink('a/by-host', `${fixture.root}/docs`)
    await view.createSymlink('top', '/workspace')
    assert.equal(await fs.readlink(path.join(fixture.root, 'a/by-mount')), '../docs/readme.md')
    assert.equal(await fs.readlink(path.join(fixture.root, 'a/by-host')), '../docs')
    assert.equal(await fs.readlink(path.join(fixture.root, 'top')), '.')
    assert.equal(await fs.readFile(path.join(fixture.root, 'a/by-mount'), 'utf8'), 'text\n')
    // Positive control: a relative link is written as given; one leading out is refused.
    await view.createSymlink('a/relative', '../docs')
    assert.equal(await fs.readlink(path.join(fixture.root, 'a/relative')), '../docs')
    await assertRejectsWith(view.createSymlink('out', '/etc/passwd'), 'path_outside_workspace')
    await assertRejectsWith(
      view.createSymlink('out2', '/workspace/../etc'),
      'path_outside_workspace',
    )
  })

  it('keeps only permission bits of a mode it is given', async (t) => {
    const fixture = await makeFixture(t)
    const view = createWorkspaceView({ tree: new DirectoryTree(fixture.root) })
    await view.writeFile('tool', '#!/bin/sh\n', { mode: 0o6755 })
    assert.equal((await fs.stat(path.join(fixture.root, 'tool'))).mode & 0o7777, 0o755)
  })
})

describe('a home folder inside the workspace', () => {
  it('protects its shell, git and key files, anchored at the home folder', async (t) => {
    const fixture = await makeFixture(t)
    const home = path.join(fixture.root, 'home/me')
    await fs.mkdir(home, { recursive: true })
    const view = createWorkspaceView({
      tree: new DirectoryTree(fixture.root),
      protectedPaths: homeProtectedPaths(fixture.root, home),
    })
    for (const target of [
      '.bashrc',
      '.profile',
      '.gitconfig',
      '.ssh/authorized_keys',
      '.config/git/config',
      '.config/systemd/user/x.service',
      '.local/bin/git',
    ]) {
      await assertRejectsWith(view.writeFile(`home/me/${target}`, 'x'), 'protected_path')
    }
    // Positive controls: the same names elsewhere, and ordinary files in the home folder.
    await view.writeFile('project/.profile', 'x')
    await view.writeFile('home/me/notes.md', 'x')
    assert.deepEqual(homeProtectedPaths(fixture.root, '/elsewhere/home'), [])
    assert.ok(homeProtectedPaths(fixture.root, fixture.root).includes('.bashrc'))
  })
})
