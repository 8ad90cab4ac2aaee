/**
 * Reading index files, with git as the oracle: every index git writes (versions 2, 3 and 4,
 * SHA-256, long names, conflicts, extended flags, the untracked cache, a split index) is read
 * as `git ls-files --stage` reads it, and the index without extensions is one git reads the same.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, describe, it } from 'node:test'
import { git, gitOk } from '../../../test/helpers/git-repository.ts'
import { indexWithoutExtensions, parseIndex } from './index-file.ts'
import { listIndex } from './index-listing.ts'

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-index-file-'))
after(() => fs.rmSync(base, { recursive: true, force: true }))
let repositories = 0

/** A repository with files, a link and a long name, then `steps` (git arguments each). */
function repository(format: 'sha1' | 'sha256', ...steps: string[][]): string {
  const folder = path.join(base, `r${++repositories}`)
  fs.mkdirSync(path.join(folder, 'dir/sub'), { recursive: true })
  gitOk(folder, ['init', '-q', '-b', 'main', `--object-format=${format}`])
  fs.writeFileSync(path.join(folder, 'a.txt'), 'a\n')
  fs.writeFileSync(path.join(folder, 'dir/sub/b.txt'), 'b\n')
  fs.writeFileSync(path.join(folder, 'dir/sub/c.txt'), 'c\n')
  fs.writeFileSync(path.join(folder, `${'n'.repeat(200)}`), 'long\n')
  fs.symlinkSync('a.txt', path.join(folder, 'link'))
  gitOk(folder, ['add', '-A'])
  gitOk(folder, ['commit', '-q', '-m', 'first'])
  for (const step of steps) gitOk(folder, step)
  return folder
}

/** Stages a name longer than the 4095 bytes an entry's flags can count (no such file exists). */
function stageLongName(folder: string): void {
  const blob = gitOk(folder, ['rev-parse', 'HEAD:a.txt'])
  const deep = Array.from({ length: 17 }, (_, index) => `${index}`.padEnd(250, 'd')).join('/')
  gitOk(folder, ['update-index', '--add', '--cacheinfo', `100644,${blob},${deep}`])
}

const indexOf = (folder: string): Buffer => fs.readFileSync(path.join(folder, '.git/index'))

async function assertReadAsGit(folder: string, format: 'sha1' | 'sha256'): Promise<string[]> {
  const bytes = indexOf(folder)
  const parsed = parseIndex(bytes, format, 1000)
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.reason)
  const listed = await listIndex(bytes, format, 1000)
  assert.ok(listed.ok, listed.ok ? '' : listed.reason)
  assert.deepEqual(parsed.entries, listed.entries)
  const stripped = indexWithoutExtensions(bytes, parsed, format)
  const again = parseIndex(stripped, format, 1000)
  assert.ok(again.ok)
  assert.deepEqual(again.extensions, [])
  assert.deepEqual(await listIndex(stripped, format, 1000), listed)
  return [...parsed.extensions]
}

describe('parseIndex reads an index as git does', () => {
  it('version 2 with a cache tree, and the same without extensions', async () => {
    const folder = repository('sha1', ['write-tree'])
    stageLongName(folder)
    assert.deepEqual(await assertReadAsGit(folder, 'sha1'), ['TREE'])
  })

  it('version 3 (intent-to-add, skip-worktree) and version 4 (prefix-compressed names)', async () => {
    const three = repository('sha1', ['update-index', '--skip-worktree', 'dir/sub/b.txt'])
    fs.writeFileSync(path.join(three, 'x'), 'x\n')
    gitOk(three, ['add', '-N', 'x'])
    assert.equal(indexOf(three).readUInt32BE(4), 3)
    await assertReadAsGit(three, 'sha1')
    const four = repository('sha1', ['update-index', '--index-version', '4'])
    stageLongName(four)
    assert.equal(indexOf(four).readUInt32BE(4), 4)
    await assertReadAsGit(four, 'sha1')
  })

  it('SHA-256 repositories, conflicts and the untracked cache', async () => {
    await assertReadAsGit(repository('sha256'), 'sha256')
    const conflicted = repository('sha1', ['checkout', '-q', '-b', 'other'])
    fs.writeFileSync(path.join(conflicted, 'a.txt'), 'other\n')
    gitOk(conflicted, ['add', 'a.txt'])
    gitOk(conflicted, ['commit', '-q', '-m', 'other'])
    gitOk(conflicted, ['checkout', '-q', 'main'])
    fs.writeFileSync(path.join(conflicted, 'a.txt'), 'main\n')
    gitOk(conflicted, ['commit', '-q', '-am', 'main'])
    assert.equal(git(conflicted, ['merge', '-q', 'other']).status, 1)
    const parsed = parseIndex(indexOf(conflicted), 'sha1', 1000)
    assert.ok(parsed.ok)
    assert.deepEqual(
      parsed.entries.filter((entry) => entry.path === 'a.txt').map((entry) => entry.stage),
      [1, 2, 3],
    )
    await assertReadAsGit(conflicted, 'sha1')
    const untracked = repository('sha1', ['-c', 'core.untrackedCache=true', 'status', '-uall'])
    assert.ok((await assertReadAsGit(untracked, 'sha1')).includes('UNTR'))
  })

  it('names a split index by its link extension', async () => {
    const split = repository('sha1', ['update-index', '--split-index'])
    const parsed = parseIndex(indexOf(split), 'sha1', 1000)
    assert.ok(parsed.ok)
    assert.ok(parsed.extensions.includes('link'))
  })

  it('refuses what git would not read: a wrong checksum, a short file, too many entries', () => {
    const bytes = indexOf(repository('sha1'))
    const flipped = Buffer.from(bytes)
    flipped[20] = (flipped[20] ?? 0) ^ 1
    assert.deepEqual(parseIndex(flipped, 'sha1', 1000), {
      ok: false,
      reason: 'its checksum is wrong, so git would not read it',
    })
    assert.equal(parseIndex(bytes.subarray(0, 10), 'sha1', 1000).ok, false)
    assert.deepEqual(parseIndex(bytes, 'sha1', 2), {
      ok: false,
      reason: 'it holds 5 entries, more than the 2 judged at once',
    })
  })
})
