import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { TreeChanges, TreeEntryChange } from '../../workspace/git/tree-changes.ts'
import { CheckoutJudge, MAX_COMPARISONS, type MayWrite } from './checkout-rules.ts'
import { JudgedContents, type HistoryHost, type RepositoryJudging } from './history-context.ts'

const BASE = 'b'.repeat(40)
const OLD = 'o'.repeat(40)
const NEW = 'n'.repeat(40)

const added = (path: string, mode = '100644', target?: string): TreeEntryChange => ({
  path,
  status: 'added',
  mode,
  ...(target === undefined ? {} : { target }),
})

/** A repository whose tree comparisons are `trees` (by `from..to`), and what was asked of it. */
function setup(
  trees: Record<string, TreeChanges>,
  options: {
    gitDir?: string
    base?: string | undefined
    parents?: Record<string, string[]> | undefined
  } = {},
): { judge: CheckoutJudge; asked: string[]; compared: string[] } {
  const asked: string[] = []
  const compared: string[] = []
  const host = {
    async treeChanges(_gitDir, _staged, comparisons) {
      return comparisons.map(({ from, to }) => {
        const key = `${from ?? ''}..${to}`
        compared.push(key)
        return trees[key] ?? { ok: true, changes: [] }
      })
    },
    async commitParents(_gitDir, _staged, commits) {
      const known = options.parents
      if (known === undefined) return undefined
      return new Map(commits.map((id) => [id, known[id] ?? []]))
    },
  } as Partial<HistoryHost> as HistoryHost
  const repository: RepositoryJudging = {
    gitDir: options.gitDir ?? '.git',
    host,
    format: 'sha1',
    judged: new JudgedContents({ read: async () => undefined, sameAsHost: async () => false }, 0),
    refused: new Map(),
    unchanged: new Set(),
    dropped: new Map(),
    maxFileBytes: 0,
  }
  // The write policy's stand-in: .envrc and links leading to .ssh are refused.
  const mayWrite: MayWrite = async (path, change) => {
    asked.push(`${change.type} ${path}${change.target === undefined ? '' : ` -> ${change.target}`}`)
    if (path.endsWith('.envrc')) return 'Refused: .envrc is protected.'
    if (change.target?.includes('.ssh') === true) return 'it leads to .ssh'
    return undefined
  }
  const base = 'base' in options ? options.base : BASE
  return { judge: new CheckoutJudge(repository, mayWrite, async () => base, []), asked, compared }
}

describe('CheckoutJudge: what checking out a moved ref would write', () => {
  it('refuses a new ref whose commit adds a protected file over the host HEAD, naming both', async () => {
    const { judge, asked } = setup({
      [`${BASE}..${NEW}`]: { ok: true, changes: [added('a.txt'), added('.envrc')] },
    })
    const [verdict] = await judge.judge([{ name: 'refs/heads/evil', after: NEW }])
    assert.equal(
      verdict,
      `refs/heads/evil would lead to ${NEW}, and checking that out writes .envrc, which a command may not write (.envrc is protected). Commit only files the command may write; a change to .envrc is the user's to make`,
    )
    assert.deepEqual(asked, ['file a.txt', 'file .envrc'])
  })

  it('lets a ref through whose checkout writes only what a command may write', async () => {
    const { judge } = setup({ [`${BASE}..${NEW}`]: { ok: true, changes: [added('a.txt')] } })
    assert.deepEqual(await judge.judge([{ name: 'refs/heads/ok', after: NEW }]), [undefined])
  })

  it('a moved ref: only paths the move itself changed count (the old commit already held the rest)', async () => {
    const fromBase = { ok: true, changes: [added('.envrc'), added('b.txt')] } as const
    const kept = setup({
      [`${BASE}..${NEW}`]: fromBase,
      [`${OLD}..${NEW}`]: { ok: true, changes: [added('b.txt')] },
    })
    assert.deepEqual(await kept.judge.judge([{ name: 'refs/heads/t', before: OLD, after: NEW }]), [
      undefined,
    ])
    assert.deepEqual(kept.asked, ['file b.txt'])
    const changed = setup({
      [`${BASE}..${NEW}`]: fromBase,
      [`${OLD}..${NEW}`]: { ok: true, changes: [added('.envrc')] },
    })
    const [verdict] = await changed.judge.judge([{ name: 'refs/heads/t', before: OLD, after: NEW }])
    assert.match(verdict ?? '', /writes \.envrc/)
  })

  it('asks removals as removals, links with their targets, and refuses absolute link targets itself', async () => {
    const { judge, asked } = setup({
      [`${BASE}..${NEW}`]: {
        ok: true,
        changes: [
          { path: 'gone.txt', status: 'deleted', mode: '000000' },
          added('link', '120000', 'a.txt'),
          added('sub', '160000'),
        ],
      },
      [`${BASE}..${OLD}`]: { ok: true, changes: [added('abs', '120000', '/etc/passwd')] },
    })
    const [fine, absolute] = await judge.judge([
      { name: 'refs/heads/a', after: NEW },
      { name: 'refs/heads/b', after: OLD },
    ])
    assert.equal(fine, undefined)
    assert.match(absolute ?? '', /writes abs, .*a link to \/etc\/passwd/)
    assert.deepEqual(asked, ['delete gone.txt', 'symlink link -> a.txt', 'directory sub'])
  })

  it('places paths in the work tree of a nested repository', async () => {
    const { judge, asked } = setup(
      { [`${BASE}..${NEW}`]: { ok: true, changes: [added('.envrc')] } },
      { gitDir: 'tools/sub/.git' },
    )
    const [verdict] = await judge.judge([{ name: 'HEAD', after: NEW }])
    assert.match(verdict ?? '', /writes tools\/sub\/\.envrc/)
    assert.deepEqual(asked, ['file tools/sub/.envrc'])
  })

  it('compares with the empty tree when the host has no commit yet', async () => {
    const { judge, compared } = setup(
      { [`..${NEW}`]: { ok: true, changes: [added('.envrc')] } },
      { base: undefined },
    )
    assert.match((await judge.judge([{ name: 'refs/heads/x', after: NEW }]))[0] ?? '', /\.envrc/)
    assert.deepEqual(compared, [`..${NEW}`])
  })

  it('fails closed: what git cannot compare, and past the bound, is refused and says why', async () => {
    const { judge, compared } = setup({
      [`${BASE}..${NEW}`]: { ok: false, reason: 'git could not read it as a commit or tree' },
    })
    const [unreadable] = await judge.judge([{ name: 'refs/heads/x', after: NEW }])
    assert.match(unreadable ?? '', /cannot be judged: git could not read it/)
    const many = Array.from({ length: MAX_COMPARISONS + 5 }, (_, index) => ({
      name: `refs/heads/b${index}`,
      after: index.toString(16).padStart(40, '0'),
    }))
    const verdicts = await judge.judge(many)
    assert.equal(compared.length, MAX_COMPARISONS)
    assert.equal(verdicts.filter((verdict) => verdict === undefined).length, MAX_COMPARISONS - 1)
    assert.match(verdicts.at(-1) ?? '', /more commits than are judged at once \(256\)/)
  })

  it('a stash: its index and untracked-files parents are judged too, the untracked ones whole', async () => {
    const INDEX = 'i'.repeat(40)
    const UNTRACKED = 'u'.repeat(40)
    const trees = {
      [`${BASE}..${NEW}`]: { ok: true, changes: [added('a.txt')] },
      [`${BASE}..${INDEX}`]: { ok: true, changes: [added('a.txt')] },
      [`..${UNTRACKED}`]: { ok: true, changes: [added('notes.txt'), added('.envrc')] },
    } as const
    const { judge, compared } = setup(trees, { parents: { [NEW]: [BASE, INDEX, UNTRACKED] } })
    const [verdict] = await judge.judge([{ name: 'refs/stash', after: NEW, stash: true }])
    assert.equal(
      verdict,
      `refs/stash would lead to the stash ${NEW}, and popping it writes .envrc from its untracked files (its third parent), which a command may not write (.envrc is protected). Stash only files the command may write; a change to .envrc is the user's to make`,
    )
    assert.deepEqual(compared.sort(), [`..${UNTRACKED}`, `${BASE}..${INDEX}`, `${BASE}..${NEW}`])
    // The same commit under another name is a checkout only: its parents are not asked for.
    const plain = setup(trees, { parents: { [NEW]: [BASE, INDEX, UNTRACKED] } })
    assert.deepEqual(await plain.judge.judge([{ name: 'refs/heads/x', after: NEW }]), [undefined])
    assert.deepEqual(plain.compared, [`${BASE}..${NEW}`])
    // The index parent alone, and a stash without untracked files that passes.
    const index = setup(
      { [`${BASE}..${INDEX}`]: { ok: true, changes: [added('.envrc')] } },
      { parents: { [NEW]: [BASE, INDEX] } },
    )
    const [fromIndex] = await index.judge.judge([{ name: 'refs/stash', after: NEW, stash: true }])
    assert.match(fromIndex ?? '', /writes \.envrc from its index \(its second parent/)
    const fine = setup({}, { parents: { [NEW]: [BASE, INDEX] } })
    assert.deepEqual(await fine.judge.judge([{ name: 'refs/stash', after: NEW, stash: true }]), [
      undefined,
    ])
    // Fails closed: parents git cannot read.
    const unreadable = setup({}, { parents: undefined })
    const [unknown] = await unreadable.judge.judge([
      { name: 'refs/stash', after: NEW, stash: true },
    ])
    assert.match(unknown ?? '', /could not read its parents/)
  })
})
