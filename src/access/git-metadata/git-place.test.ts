import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { gitEntryKind, gitPlaceByName } from './git-place.ts'

describe('gitPlaceByName', () => {
  const cases: [string, ReturnType<typeof gitPlaceByName>][] = [
    ['src/a.ts', { type: 'none' }],
    ['.gitignore', { type: 'none' }],
    ['git/config', { type: 'none' }],
    ['.git', { type: 'entry', gitDir: '.git' }],
    ['sub/.git', { type: 'entry', gitDir: 'sub/.git' }],
    ['.git/config', { type: 'inside', gitDir: '.git', inner: 'config' }],
    ['a/b/.git/refs/heads/x', { type: 'inside', gitDir: 'a/b/.git', inner: 'refs/heads/x' }],
    ['.GIT/hooks/pre-commit', { type: 'inside', gitDir: '.GIT', inner: 'hooks/pre-commit' }],
    [
      '.git/modules/m/.git/config',
      { type: 'inside', gitDir: '.git', inner: 'modules/m/.git/config' },
    ],
  ]
  for (const [path, expected] of cases) {
    it(`${path}`, () => assert.deepEqual(gitPlaceByName(path), expected))
  }
})

describe('gitEntryKind: only what local git work writes', () => {
  const writable: [string, string][] = [
    ['objects/ab/cdef0123', 'object'],
    ['objects/pack/pack-1.pack', 'object'],
    ['objects/info/packs', 'object'],
    ['objects/info/commit-graph', 'object'],
    ['refs/heads/main', 'ref'],
    ['refs/heads/main.lock', 'ref'],
    ['refs/tags/v1', 'ref'],
    ['logs/HEAD', 'reflog'],
    ['logs/refs/heads/main', 'reflog'],
    ['packed-refs', 'packed-refs'],
    ['packed-refs.lock', 'packed-refs'],
    ['HEAD', 'state'],
    ['index', 'state'],
    ['index.lock', 'state'],
    ['ORIG_HEAD', 'state'],
    ['FETCH_HEAD', 'state'],
    ['CHERRY_PICK_HEAD', 'state'],
    ['MERGE_MSG', 'state'],
    ['MERGE_MODE', 'state'],
    ['COMMIT_EDITMSG', 'state'],
  ]
  for (const [inner, kind] of writable) {
    it(`${inner} is writable (${kind})`, () => assert.equal(gitEntryKind(inner), kind))
  }
  const protectedEntries = [
    'config',
    'config.worktree',
    'config.lock',
    'commondir',
    'gitdir',
    'description',
    'hooks/pre-commit',
    'hooks',
    'info/attributes',
    'info/exclude',
    'objects/info/alternates',
    'objects/info/http-alternates',
    'objects/info/ALTERNATES',
    'modules/sub/config',
    'worktrees/w/gitdir',
    'remotes/origin',
    'branches/origin',
    'rebase-merge/git-rebase-todo',
    'sequencer/todo',
    'shallow',
    'head',
    'refs/../config',
    'objects/../hooks/x',
    'HEAD/x',
    // Another repository inside this one: git run in `.git/refs/x` takes it for its own.
    'refs/x/.git',
    'refs/x/.git/config',
    'refs/x/.GIT/hooks/pre-commit',
    'objects/ab/.git/config',
    'logs/.git/config',
    'refs/heads/.hidden',
  ]
  for (const inner of protectedEntries) {
    it(`${inner} is protected`, () => assert.equal(gitEntryKind(inner), undefined))
  }
})
