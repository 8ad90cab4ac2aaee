/**
 * git in a fork. Commits made with git in a fork stay in the fork's kept `.git`: a merge brings
 * the fork's files, never its git writes, into the user's repository. The merge's answer says
 * so, names the commits left behind and what to do, through `eitri merge` and the
 * `workspace_merge` tool. And the file tools' refusal of a fork's `.git` says what the rule is.
 * Real bubblewrap, real git, real CLI processes.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ApprovalDecision } from '../src/access/approval.ts'
import { committedProject, openJailedWorkshop } from './helpers/committed-project.ts'
import { runEitri } from './helpers/eitri-process.ts'
import { gitOk } from './helpers/git-repository.ts'

const GIT_NAMES =
  'GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@e GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@e'
const TWO_COMMITS = `echo one > src/a.js && ${GIT_NAMES} git commit -qam "first in the fork" && echo two > src/a.js && ${GIT_NAMES} git commit -qam "second in the fork"`

describe('a merge of a fork holding git commits', () => {
  it('eitri merge says which commits stayed behind and how to commit their files on main', async () => {
    await using scratch = await committedProject({ 'src/a.js': 'main\n' })
    assert.equal((await runEitri(['fork', 'f', ...scratch.flags])).status, 0)
    const exec = (command: string) =>
      runEitri(['exec', '--fork', 'f', ...scratch.flags, '--', 'bash', '-c', command])
    const made = await exec(TWO_COMMITS)
    assert.equal(made.status, 0, made.stderr)
    const mainHead = gitOk(scratch.workspace, ['rev-parse', '--short', 'HEAD'])
    const merged = await runEitri(['merge', 'f', ...scratch.flags])
    assert.equal(merged.status, 0, merged.stderr)
    assert.match(merged.stdout, /Merged into main: src\/a\.js \(modified\)/)
    assert.match(
      merged.stdout,
      /git commits made in the fork were not merged .*: 2 commits on main \("second in the fork", "first in the fork"\), your repository's main is at [0-9a-f]{7}/,
    )
    assert.ok(merged.stdout.includes(mainHead), merged.stdout)
    assert.match(merged.stdout, /git add -A && git commit/)
    // The user's repository is as it was: the files changed, uncommitted.
    assert.equal(gitOk(scratch.workspace, ['log', '--format=%s']), 'first')
    assert.equal(gitOk(scratch.workspace, ['status', '--porcelain']), 'M src/a.js')
  })

  it('workspace_merge says so too, and a fork without commits gets no such note', async () => {
    await using scratch = await committedProject({ 'src/a.js': 'main\n', 'src/b.js': 'b\n' })
    const approveAll = async (): Promise<ApprovalDecision> => ({ type: 'approved', by: 'tester' })
    await using workshop = await openJailedWorkshop(scratch, { approver: approveAll })
    await workshop.call('workspace_fork', { name: 'plain' })
    await workshop.call('workspace_fork', { name: 'git', from: 'main' })
    await workshop.call('workspace_use', { fork: 'plain' })
    const plain = await workshop.call('shell', { command: 'echo p > src/b.js' })
    assert.equal(plain.type, 'success', plain.content)
    await workshop.call('workspace_use', { fork: 'git' })
    const made = await workshop.call('shell', {
      command: `${TWO_COMMITS} && git switch -qc side && echo s > src/s.js && git add src/s.js && ${GIT_NAMES} git commit -qm "on side"`,
    })
    assert.equal(made.type, 'success', made.content)
    await workshop.call('workspace_use', { fork: 'main' })
    const withGit = await workshop.call('workspace_merge', { fork: 'git' })
    assert.equal(withGit.type, 'success', withGit.content)
    assert.match(withGit.content, /git commits made in the fork were not merged/)
    assert.match(withGit.content, /2 commits on main \("second in the fork", "first in the fork"\)/)
    assert.match(withGit.content, /1 commit on side \("on side"\), new in the fork/)
    const withoutGit = await workshop.call('workspace_merge', { fork: 'plain' })
    assert.equal(withoutGit.type, 'success', withoutGit.content)
    assert.doesNotMatch(withoutGit.content, /git commits/)
  })

  it('the file tools refuse .git/hooks in a fork saying why (a merge would carry it to the host), not "no repository"', async () => {
    await using scratch = await committedProject({ 'src/a.js': 'main\n' })
    await using workshop = await openJailedWorkshop(scratch)
    await workshop.call('workspace_fork', { name: 'hooks' })
    const hook = { path: '.git/hooks/pre-commit', content: '#!/bin/sh\necho hi\n' }
    const answers = [
      await workshop.call('room_write', { fork: 'hooks', files: [hook] }),
      await (async () => {
        await workshop.call('workspace_use', { fork: 'hooks' })
        return workshop.call('write_file', hook)
      })(),
    ]
    for (const answer of answers) {
      assert.equal(answer.type, 'error', answer.content)
      assert.equal(answer.code, 'protected_path')
      assert.doesNotMatch(answer.content, /where there was none/)
      assert.match(
        answer.content,
        /\.git\/hooks\/pre-commit is inside a repository folder \(\.git\), which a fork's files never hold: a merge would carry it into the user's folder, where git runs hooks and configuration on the host/,
      )
      assert.match(answer.content, /Run git in the fork's shell.*ask the user to add it/)
    }
    // On main the rule for the repository folder itself still speaks.
    await workshop.call('workspace_use', { fork: 'main' })
    const onMain = await workshop.call('write_file', hook)
    assert.equal(onMain.type, 'error', onMain.content)
    assert.match(onMain.content, /only objects, refs, reflogs/)
  })
})
