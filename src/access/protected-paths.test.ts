import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { protectedPathMatcher } from './protected-paths.ts'

describe('protectedPathMatcher: what git-hook managers run', () => {
  const matches = protectedPathMatcher()
  const hooks: [string, string][] = [
    ['.husky/pre-commit', '.husky/**'],
    ['.husky/_/h', '.husky/**'],
    ['.husky', '.husky/**'],
    ['apps/web/.husky/pre-push', '.husky/**'],
    ['.githooks/pre-commit', '.githooks/**'],
    ['.pre-commit-config.yaml', '.pre-commit-config.yaml'],
    ['lefthook.yml', 'lefthook.yml'],
    ['Lefthook.YML', 'lefthook.yml'],
    ['.lefthook.yaml', '.lefthook.yaml'],
    ['lefthook-local.yml', 'lefthook-local.yml'],
    ['.lefthook-local.toml', '.lefthook-local.toml'],
    ['lefthook.json', 'lefthook.json'],
    ['.config/lefthook.yml', 'lefthook.yml'],
    ['.lefthook/pre-commit/lint.sh', '.lefthook/**'],
    ['.lefthook-local/pre-push/x.sh', '.lefthook-local/**'],
  ]
  for (const [target, rule] of hooks) {
    it(`protects ${target}`, () => assert.equal(matches(target), rule))
  }
  // Positive controls: names beside them stay writable.
  for (const target of [
    'husky.md',
    'src/husky.ts',
    'lefthook.md',
    'docs/githooks.md',
    '.config/x.yml',
  ])
    it(`leaves ${target} writable`, () => assert.equal(matches(target), undefined))
})
