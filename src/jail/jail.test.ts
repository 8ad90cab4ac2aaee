import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
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
        'for p in .git/hooks/pre-commit .git/config .git/info/attributes .gitmodules .envrc .mcp.json .vscode/tasks.json .vscode/settings.json .idea/x .claude/settings.json .codex/config.toml .cursor/mcp.json .husky/pre-commit .githooks/pre-commit .pre-commit-config.yaml lefthook.yml .lefthook-local.yaml .lefthook/pre-commit/x.sh; do (echo pwned > $p) 2>/dev/null && echo "WROTE $p"; done; mv .git .git-moved 2>/dev/null && echo MOVED; mv .vscode .v2 2>/dev/null && echo MOVED2; echo end',
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
      '.husky/pre-commit',
      '.githooks/pre-commit',
      '.pre-commit-config.yaml',
      'lefthook.yml',
      '.lefthook/pre-commit/x.sh',
      '.config/lefthook.yml',
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
    // `.config` itself is an ordinary folder: it comes back, empty.
    assert.deepEqual((await fs.readdir(workspace)).sort(), ['.config', '.git', '.vscode'])
    assert.deepEqual(await fs.readdir(path.join(workspace, '.config')), [])
    assert.deepEqual(await fs.readdir(path.join(workspace, '.git')), ['HEAD'])
    assert.equal(await fs.readFile(path.join(workspace, '.vscode/settings.json'), 'utf8'), '{}')
    // No placeholder shows in the jail: git sees only what the workspace holds.
    const listing = await jail.run({ command: bash('ls -A'), access: 'workspace-write' })
    assert.equal(listing.stdout, '.config\n.git\n.vscode\n')
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
            'GNUPGHOME',
            // The jail's own values (decision 0064); npx sets npm_config_cache on the host too.
            'XDG_CACHE_HOME',
            'npm_config_cache',
            'PWD',
            'SHLVL',
            '_',
          ].includes(name),
        name,
      )
    }
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
      command: bash('echo out > bg.txt; echo started; sleep 30'),
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
