/**
 * A fork's kept `.git` takes only what local git work writes (decision 0026). A command in a
 * fork could write the fork's view of `.git/config` (an fsmonitor, a `!` alias, a textconv
 * driver, an include) or `.git/hooks`; kept, later commands the policy runs without a person
 * (`git status`, `git diff`, `git log -p`) ran that program. Now such a change is not kept and
 * the command's answer says so; `git config user.email` and a commit still work in a fork.
 * Real bubblewrap, real git.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ApprovalDecision, ApprovalRequest } from '../src/access/approval.ts'
import type { ToolResult } from '../src/tool/tool-result.ts'
import { committedProject, openJailedWorkshop } from './helpers/committed-project.ts'
import type { Scratch } from './helpers/scratch.ts'

/** Config that runs `sh -c` programs writing marker files into the fork, by every key kind. */
const PLANTED_CONFIG = [
  '[core]',
  '\tfsmonitor = "echo ran >> ran-fsmonitor.txt; false"',
  '[alias]',
  '\tst = "!echo ran >> ran-alias.txt"',
  '[diff "x"]',
  '\ttextconv = "sh -c \'echo ran >> ran-textconv.txt; cat \\"$0\\"\'"',
  '[include]',
  '\tpath = ../planted.cfg',
  '',
].join('\n')

function project(): Promise<Scratch> {
  return committedProject({ 'src/a.js': 'main\n', 'planted.cfg': '' })
}

/** An approver that approves everything and records what it was asked, under `untrusted`. */
function approvingAll() {
  const asked: string[] = []
  const approver = async (request: ApprovalRequest): Promise<ApprovalDecision> => {
    asked.push(request.summary)
    return { type: 'approved', by: 'tester' }
  }
  return { asked, options: { approver, approval: 'untrusted' as const } }
}

/** Makes fork `f`, uses it, and gives the shell of the workshop's session there. */
async function inFork(workshop: {
  call: (name: string, input: Record<string, unknown>) => Promise<ToolResult>
}): Promise<(command: string) => Promise<ToolResult>> {
  await workshop.call('workspace_fork', { name: 'f' })
  await workshop.call('workspace_use', { fork: 'f' })
  return (command) => workshop.call('shell', { command })
}

/** The marker files the planted programs left in the fork, as a command lists them. */
async function ranMarkers(call: (command: string) => Promise<ToolResult>): Promise<string> {
  const listed = await call('ls ran-*.txt 2>/dev/null; true')
  return listed.content
}

describe('a fork keeps no git configuration that names a program, nor hooks', () => {
  it('an unapproved command plants config and a hook; allowed git commands then run none of it', async () => {
    await using scratch = await project()
    const asked: ApprovalRequest[] = []
    const refuseAll = async (request: ApprovalRequest): Promise<ApprovalDecision> => {
      asked.push(request)
      return { type: 'denied', by: 'tester', reason: 'not in this test' }
    }
    await using workshop = await openJailedWorkshop(scratch, { approver: refuseAll })
    await workshop.call('workspace_fork', { name: 'f' })
    await workshop.call('workspace_use', { fork: 'f' })
    const shell = (command: string) => workshop.call('shell', { command })
    const planted = await shell(
      `cat >> .git/config <<'EOF'\n${PLANTED_CONFIG}EOF\n` +
        `printf '[core]\\n\\tfsmonitor = "echo ran >> ran-include.txt; false"\\n' > planted.cfg && ` +
        `printf '#!/bin/sh\\necho ran >> ran-hook.txt\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && ` +
        `echo '*.js diff=x' > .gitattributes`,
    )
    assert.equal(planted.type, 'success', planted.content)
    assert.deepEqual(asked, [], 'planting needed no person')
    // The commands that run without a person.
    await shell('echo changed > src/a.js')
    for (const command of ['git status', 'git diff', 'git log -p -1', 'git show HEAD']) {
      const run = await shell(command)
      assert.equal(run.type, 'success', `${command}: ${run.content}`)
    }
    assert.deepEqual(asked, [], 'the git commands needed no person')
    const commit = await shell(
      'GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@e GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@e git commit -qam c',
    )
    assert.equal(commit.type, 'success', commit.content)
    assert.equal(await ranMarkers(shell), '(no output)\n\n[exit 0]')
    // The planting command was told what was not kept, why, and what to do.
    assert.match(planted.content, /\[not written back: \.git\/config: .*names a program/)
    assert.match(planted.content, /core\.fsmonitor/)
    assert.match(planted.content, /alias\.st/)
    assert.match(planted.content, /diff\.x\.textconv/)
    assert.match(planted.content, /include\.path/)
    assert.match(planted.content, /ask the user/)
    assert.match(planted.content, /\[not written back: \.git\/hooks: not kept in the jail: .*hooks/)
    // The kept config is git's own again: no program key.
    const config = await shell('cat .git/config')
    assert.match(config.content, /repositoryformatversion/)
    assert.doesNotMatch(config.content, /fsmonitor|alias|textconv|include/)
  })

  it('git config user.email (a program run in the fork) and a commit under it still work', async () => {
    await using scratch = await project()
    await using workshop = await openJailedWorkshop(scratch)
    await workshop.call('workspace_fork', { name: 'f' })
    await workshop.call('workspace_use', { fork: 'f' })
    const shell = (command: string) => workshop.call('shell', { command })
    const setup = await workshop.call('write_file', {
      path: 'setup.sh',
      content: 'git config user.email agent@example.org\ngit config user.name agent\n',
    })
    assert.equal(setup.type, 'success', setup.content)
    const configured = await shell('sh setup.sh')
    assert.equal(configured.type, 'success', configured.content)
    assert.doesNotMatch(configured.content, /not written back/)
    const commit = await shell('echo two > src/a.js && git commit -qam "in the fork"')
    assert.equal(commit.type, 'success', commit.content)
    assert.match(commit.content, /\[exit 0\]/)
    // The jail names the committer by its environment; the kept configuration is there too.
    const kept = await shell('cat .git/config && git log -1 --format=%s')
    assert.match(kept.content, /\[user\]\n\temail = agent@example\.org\n\tname = agent\n/)
    assert.match(kept.content, /^in the fork$/m)
  })

  it('an approved command plants an fsmonitor; a later git status runs it not', async () => {
    await using scratch = await project()
    const { asked, options } = approvingAll()
    await using workshop = await openJailedWorkshop(scratch, options)
    const shell = await inFork(workshop)
    await workshop.call('write_file', {
      path: 'setup.sh',
      content: 'git config core.fsmonitor "echo ran >> ran-fsmonitor.txt; false"\n',
    })
    const planted = await shell('sh setup.sh')
    assert.equal(planted.type, 'success', planted.content)
    assert.ok(asked.includes('sh setup.sh'), `a person approved it: ${asked.join(', ')}`)
    asked.length = 0
    const status = await shell('git status')
    assert.equal(status.type, 'success', status.content)
    assert.deepEqual(asked, [], 'git status needed no person')
    const markers = await workshop.call('read_file', { path: 'ran-fsmonitor.txt' })
    assert.equal(markers.type, 'error', markers.content)
    assert.match(planted.content, /\[not written back: \.git\/config: .*core\.fsmonitor/)
  })

  it('settings that make git log verify signatures (it runs gpg, which obeys ~/.gnupg) are not kept', async () => {
    // No key names a program, yet `git log` (run without a person) then runs gpg on every
    // signed commit, and gpg runs the `dirmngr-program` its gpg.conf names for a key it lacks.
    await using scratch = await project()
    const { options } = approvingAll()
    await using workshop = await openJailedWorkshop(scratch, options)
    const shell = await inFork(workshop)
    await workshop.call('write_file', {
      path: 'setup.sh',
      content:
        "git config log.showSignature true\ngit config format.pretty '%h %G? %s'\ngit config pretty.signed 'format:%GS'\ngit config user.email agent@example.org\n",
    })
    const planted = await shell('sh setup.sh')
    assert.equal(planted.type, 'success', planted.content)
    assert.match(
      planted.content,
      /\[not written back: \.git\/config: .*names a program git would run \(log\.showsignature, format\.pretty, pretty\.signed\)/,
    )
    const config = await shell('cat .git/config')
    assert.doesNotMatch(config.content, /showsignature|%G/i)
  })

  it('a promisor remote with an ext:: URL (no key names a program): an allowed git cat-file runs nothing', async () => {
    // No key of this names a program, so the keep door keeps it; but a missing object makes
    // git fetch it lazily from the promisor remote, and an ext:: URL is a command line.
    await using scratch = await project()
    const { asked, options } = approvingAll()
    await using workshop = await openJailedWorkshop(scratch, options)
    const shell = await inFork(workshop)
    const planted = await shell(
      `cat >> .git/config <<'EOF'\n[core]\n\trepositoryformatversion = 1\n[extensions]\n\tpartialclone = origin\n` +
        `[remote "origin"]\n\turl = ext::sh -c date>>/workspace/ran-ext.txt\n\tpromisor = true\n` +
        `[protocol "ext"]\n\tallow = always\nEOF`,
    )
    assert.equal(planted.type, 'success', planted.content)
    asked.length = 0
    const missing = '0123456789abcdef0123456789abcdef01234567'
    for (const command of [`git cat-file -p ${missing}`, `git show ${missing}`]) {
      const run = await shell(command)
      // git refuses the transport (128), or, when the lazy fetch it started ends before git
      // has written it the request, dies of the closed pipe (141 through a shell, or the
      // signal itself when git is the jail's program): either way nothing ran.
      assert.match(run.content, /transport 'ext' not allowed/, `${command}: ${run.content}`)
      assert.match(
        run.content,
        /\[exit (128|141|by signal SIGPIPE)\]/,
        `${command}: ${run.content}`,
      )
    }
    assert.deepEqual(asked, [], 'the git commands needed no person')
    assert.equal(await ranMarkers(shell), '(no output)\n\n[exit 0]')
  })

  it("nor does a repository a command made inside the fork's .git (below refs, objects or logs)", async () => {
    // git finds a repository by a `.git` below the folder it runs in, so `.git/refs/x/.git` is
    // one when git runs in `.git/refs/x`; the keep door took it for refs (and `objects/…/.git`
    // for objects), config and all, and a later `cd .git/refs/x && git status` ran its
    // fsmonitor.
    await using scratch = await project()
    const { options } = approvingAll()
    await using workshop = await openJailedWorkshop(scratch, options)
    const shell = await inFork(workshop)
    const folders = ['.git/refs/x', '.git/objects/ab', '.git/logs/x']
    await workshop.call('write_file', {
      path: 'setup.sh',
      content: folders
        .map(
          (folder, index) =>
            `git init -q ${folder} && git -C ${folder} config core.fsmonitor "echo ran >> /workspace/ran-inner-${index}.txt; false"\n`,
        )
        .join(''),
    })
    const planted = await shell('sh setup.sh')
    assert.equal(planted.type, 'success', planted.content)
    for (const folder of folders) {
      const status = await shell(`cd ${folder} && git status --short`)
      assert.equal(status.type, 'success', status.content)
    }
    assert.equal(await ranMarkers(shell), '(no output)\n\n[exit 0]')
    assert.match(planted.content, /\[not written back: \.git\/refs\/x\/\.git: /)
  })

  it('nor does a repository a command made in an ignored folder of the fork', async () => {
    await using scratch = await committedProject({ '.gitignore': 'vendor/\n', 'src/a.js': 'a\n' })
    await using workshop = await openJailedWorkshop(scratch)
    await workshop.call('workspace_fork', { name: 'f' })
    await workshop.call('workspace_use', { fork: 'f' })
    const shell = (command: string) => workshop.call('shell', { command })
    await workshop.call('write_file', {
      path: 'setup.sh',
      content:
        'mkdir -p vendor/x && cd vendor/x && git init -q && git config core.fsmonitor "echo ran >> /workspace/ran-nested.txt; false"\n',
    })
    const planted = await shell('sh setup.sh')
    assert.equal(planted.type, 'success', planted.content)
    const status = await shell('cd vendor/x && git status --short')
    assert.equal(status.type, 'success', status.content)
    assert.equal(await ranMarkers(shell), '(no output)\n\n[exit 0]')
    assert.match(planted.content, /\[not written back: vendor\/x\/\.git\/config: .*core\.fsmonitor/)
    // git init's template files go without a word.
    assert.doesNotMatch(
      planted.content,
      /not written back: vendor\/x\/\.git\/(hooks|description|branches|info)/,
    )
  })

  it('nor a .git file an approved command writes, pointing git at a repository it made (decision 0026)', async () => {
    // `sub/.git` (or the fork's own `.git`, replaced) holding `gitdir: ../evil` makes git in
    // `sub` use `evil` as its repository, configuration and all. `evil` itself is kept in the
    // jail (a repository the command made), so a kept pointer would run its fsmonitor at
    // every later `git status`, which needs no person.
    await using scratch = await project()
    const { asked, options } = approvingAll()
    await using workshop = await openJailedWorkshop(scratch, options)
    const shell = await inFork(workshop)
    await workshop.call('write_file', {
      path: 'setup.sh',
      content: [
        'git init -q x && mv x/.git evil && rmdir x',
        'git --git-dir=evil config core.fsmonitor "echo ran >> /workspace/ran-gitfile.txt; false"',
        'mkdir sub && printf "gitdir: ../evil\\n" > sub/.git',
        // The control, in the command itself: git in sub runs evil's fsmonitor.
        '(cd sub && git status --short >/dev/null) && cat /workspace/ran-gitfile.txt',
        'rm /workspace/ran-gitfile.txt',
        'mv .git real && printf "gitdir: evil\\n" > .git',
        '',
      ].join('\n'),
    })
    const planted = await shell('sh setup.sh')
    assert.equal(planted.type, 'success', planted.content)
    assert.match(planted.content, /^ran$/m, 'the pointer works in the command that wrote it')
    assert.ok(asked.includes('sh setup.sh'), `a person approved it: ${asked.join(', ')}`)
    assert.match(planted.content, /\[not written back: sub\/\.git: not kept in the jail: /)
    assert.match(planted.content, /\[not written back: \.git: not kept in the jail: /)
    asked.length = 0
    const status = await shell('git status --short')
    assert.equal(status.type, 'success', status.content)
    assert.deepEqual(asked, [], 'git status needed no person')
    // git after cd needs a person (the policy cannot tell which repository it is); approved.
    const inSub = await shell('cd sub && git status --short')
    assert.equal(inSub.type, 'success', inSub.content)
    assert.equal(await ranMarkers(shell), '(no output)\n\n[exit 0]')
    const kept = await shell('test -d .git && test ! -e sub/.git && git log -1 --format=%s')
    assert.match(kept.content, /\[exit 0\]/, kept.content)
  })
})
