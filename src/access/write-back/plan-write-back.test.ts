import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fs from 'node:fs'
import path from 'node:path'
import {
  contentsProposal,
  gitOk,
  looseBlob,
  loosePath,
  makeHistoryRepository,
} from '../../../test/helpers/git-repository.ts'
import { DirectoryTree } from '../../workspace/directory-tree.ts'
import type { HistoryHost } from '../git-metadata/history-rules.ts'
import { treeHistoryHost } from '../git-metadata/tree-history-host.ts'
import { planWriteBack, type ProposedChange, type WriteBackContext } from './plan-write-back.ts'

const MIB = 1024 * 1024

/** The workspace before the changes: a repository and a file. */
const HOST_FILES = new Set(['.git/HEAD', '.git/refs/heads/main', '.git/objects/aa/bb', 'a.txt'])
const host: HistoryHost = {
  async kind(path) {
    if (HOST_FILES.has(path)) return 'file'
    return [...HOST_FILES].some((file) => file.startsWith(`${path}/`)) ? 'directory' : undefined
  },
  async read() {
    return undefined
  },
  async list(folder) {
    const names = new Map<string, 'file' | 'directory'>()
    for (const path of HOST_FILES) {
      if (!path.startsWith(`${folder}/`)) continue
      const [name = '', ...rest] = path.slice(folder.length + 1).split('/')
      names.set(name, rest.length > 0 ? 'directory' : 'file')
    }
    return [...names].map(([name, type]) => ({ name, type }))
  },
  async objectFormat() {
    return 'sha1'
  },
  async missingObjects(_gitDir, ids) {
    return new Set(ids)
  },
  async verifyPack() {
    return { ok: false, reason: 'no packs here' }
  },
  async treeChanges(_gitDir, _staged, comparisons) {
    return comparisons.map(() => ({ ok: false, reason: 'no trees here' }))
  },
  async commitParents() {
    return undefined
  },
  async linkTargets() {
    return undefined
  },
}

function context(overrides: Partial<WriteBackContext> = {}): WriteBackContext {
  return {
    // The path policy stand-in: editor settings are protected.
    decide: async (path) =>
      path.startsWith('.vscode/') ? 'protected: editor settings' : undefined,
    host,
    proposal: { read: async () => undefined, sameAsHost: async () => false },
    ...overrides,
  }
}

const file = (path: string, size = 10, mode = 0o644): ProposedChange => ({
  path,
  type: 'file',
  size,
  mode,
})

describe('planWriteBack: what may come back from a jail', () => {
  it('keeps only permission bits: never setuid, setgid or sticky, nor group or other write', async () => {
    const plan = await planWriteBack(
      [
        file('suid', 10, 0o104755),
        file('sgid', 10, 0o102755),
        file('plain', 10, 0o100644),
        file('sticky', 10, 0o1777),
        file('shared', 10, 0o100664),
        file('world', 10, 0o100666),
        file('private', 10, 0o100600),
      ],
      context(),
    )
    assert.deepEqual(
      plan.apply.map((change) => [change.path, change.mode]),
      [
        ['plain', 0o644],
        ['private', 0o600],
        ['sgid', 0o755],
        ['shared', 0o644],
        ['sticky', 0o755],
        ['suid', 0o755],
        ['world', 0o644],
      ],
    )
  })

  it('writes links into /workspace relative, refuses absolute links elsewhere, keeps relative ones', async () => {
    const plan = await planWriteBack(
      [
        { path: 'd/in', type: 'symlink', target: '/workspace/a.txt' },
        { path: 'root', type: 'symlink', target: '/workspace' },
        { path: 'deep/er/x', type: 'symlink', target: '/workspace/deep/y' },
        { path: 'out', type: 'symlink', target: '/etc/passwd' },
        { path: 'sneaky', type: 'symlink', target: '/workspace-other/x' },
        { path: 'climb', type: 'symlink', target: '/workspace/../etc/passwd' },
        { path: 'rel', type: 'symlink', target: '../a.txt' },
      ],
      context(),
    )
    assert.deepEqual(
      plan.apply.map((change) => [change.path, change.target]),
      [
        ['d/in', '../a.txt'],
        ['deep/er/x', '../y'],
        ['rel', '../a.txt'],
        ['root', '.'],
      ],
    )
    assert.deepEqual(
      plan.refused.map((refusal) => refusal.path),
      ['climb', 'out', 'sneaky'],
    )
    assert.match(plan.refused[1]?.reason ?? '', /outside the workspace/)
    assert.match(plan.refused[0]?.reason ?? '', /climbs out/)
  })

  it('bounds files by apparent size, per file and per command, and says so', async () => {
    const plan = await planWriteBack(
      [
        file('huge', 1024 * MIB),
        file('one', 100 * MIB),
        file('two', 100 * MIB),
        file('three', 100 * MIB),
        file('small'),
      ],
      context({ limits: { maxFileBytes: 128 * MIB, maxTotalBytes: 256 * MIB } }),
    )
    assert.deepEqual(
      plan.apply.map((change) => change.path),
      ['one', 'small', 'three'],
    )
    // In path order: `two` is the one past the command's bound, whatever order they came in.
    assert.deepEqual(
      plan.refused.map((refusal) => [refusal.path, /apparent size/.test(refusal.reason)]),
      [
        ['huge', true],
        ['two', true],
      ],
    )
    assert.match(plan.refused[0]?.reason ?? '', /1\.0 GiB .*over the 128 MiB/)
  })

  it('keeps a repository the command made in the jail, reported once, and judges the rest', async () => {
    const plan = await planWriteBack(
      [
        { path: 'sub/.git', type: 'directory' },
        file('sub/.git/HEAD'),
        file('sub/.git/config'),
        file('sub/.git/objects/ab/cd'),
        { path: 'fixture', type: 'directory' },
        file('fixture/HEAD'),
        { path: 'fixture/objects', type: 'directory' },
        { path: 'fixture/refs', type: 'directory' },
        file('fixture/config'),
        file('half/HEAD'),
        file('src/a.ts'),
        file('.vscode/tasks.json'),
      ],
      context(),
    )
    assert.deepEqual(
      plan.kept.map((kept) => kept.path),
      ['fixture', 'sub/.git'],
    )
    assert.deepEqual(
      plan.apply.map((change) => change.path),
      ['half/HEAD', 'src/a.ts'],
    )
    assert.deepEqual(
      plan.refused.map((refusal) => refusal.path),
      ['.vscode/tasks.json'],
    )
  })

  it('applies the history rules to the existing repository, and hands over the bytes it judged', async (t) => {
    const fixture = makeHistoryRepository()
    t.after(() => fs.rmSync(path.dirname(fixture.folder), { recursive: true, force: true }))
    const claimed = gitOk(fixture.folder, ['hash-object', '-w', '--stdin'], 'later\n')
    fs.rmSync(path.join(fixture.folder, '.git', loosePath(claimed)))
    const object = `.git/${loosePath(claimed)}`
    const plan = await planWriteBack(
      [
        { path: '.git/refs/heads/loose', type: 'delete' },
        { path: `.git/${loosePath(fixture.blob)}`, type: 'delete' },
        file('.git/refs/heads/new'),
        file('.git/HEAD'),
        file(object),
        file('.git/objects/info/commit-graph'),
      ],
      context({
        host: treeHistoryHost(new DirectoryTree(fixture.folder)),
        proposal: contentsProposal(fixture.folder, {
          '.git/refs/heads/new': `${claimed}\n`,
          '.git/HEAD': `${claimed}\n`,
          [object]: looseBlob('later\n'),
          '.git/objects/info/commit-graph': 'a graph',
        }),
      }),
    )
    assert.deepEqual(plan.refused.map((refusal) => refusal.path).sort(), [
      `.git/${loosePath(fixture.blob)}`,
      '.git/refs/heads/loose',
    ])
    // The object first: each write is judged again, and the ref and HEAD point at it.
    assert.deepEqual(
      plan.apply.map((change) => change.path),
      [object, '.git/HEAD', '.git/refs/heads/new'],
    )
    assert.equal(Buffer.from(plan.apply[2]?.content ?? []).toString(), `${claimed}\n`)
    assert.deepEqual(
      plan.dropped.map((dropped) => dropped.path),
      ['.git/objects/info/commit-graph'],
    )
  })

  it('orders removals first (children first), then folders (parents first), then files and links', async () => {
    const plan = await planWriteBack(
      [
        { path: 'gone', type: 'delete' },
        file('x/y/z.txt'),
        { path: 'x/y', type: 'directory' },
        { path: 'gone/deeper', type: 'delete' },
        { path: 'x', type: 'directory' },
        { path: 'x/link', type: 'symlink', target: 'y' },
      ],
      context(),
    )
    // A folder replaced by a file: the folder goes before the file is written.
    assert.deepEqual(
      plan.apply.map((change) => change.path),
      ['gone/deeper', 'gone', 'x', 'x/y', 'x/link', 'x/y/z.txt'],
    )
  })
})
