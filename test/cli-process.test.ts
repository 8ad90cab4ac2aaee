/**
 * The real entry point as users run it: a process, its streams and its exit status.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { packageInfo } from '../src/util/package-info.ts'
import { EITRI_BIN, finished, runEitri } from './helpers/eitri-process.ts'
import { makeScratch } from './helpers/scratch.ts'

describe('bin/eitri.js', () => {
  it('prints the version and exits 0', async () => {
    const result = await runEitri(['--version'])
    assert.deepEqual(result, { status: 0, stdout: `${packageInfo.version}\n`, stderr: '' })
  })

  it("keeps Node's compile cache in eitri's node_modules, never in the shared temporary folder", async () => {
    const { mkdtemp, readdir, rm } = await import('node:fs/promises')
    const { tmpdir } = await import('node:os')
    const { execFileSync } = await import('node:child_process')
    const temporary = await mkdtemp(`${tmpdir()}/eitri-compile-cache-`)
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: temporary }
      delete env['NODE_COMPILE_CACHE']
      delete env['NODE_DISABLE_COMPILE_CACHE']
      // Positive control: Node's own default is the temporary folder, writable by every account.
      execFileSync(process.execPath, ['-e', "require('node:module').enableCompileCache()"], { env })
      assert.deepEqual(await readdir(temporary), ['node-compile-cache'])
      await rm(`${temporary}/node-compile-cache`, { recursive: true })
      const result = await runEitri(['--version'], { env })
      assert.equal(result.status, 0, result.stderr)
      assert.deepEqual(await readdir(temporary), [])
      const cache = new URL('../node_modules/.cache/eitri-compile-cache/', import.meta.url)
      assert.ok((await readdir(cache, { recursive: true })).length > 0)
    } finally {
      await rm(temporary, { recursive: true, force: true })
    }
  })

  it('exits 2 with one error line and usage on a wrong flag, without a stack trace', async () => {
    const result = await runEitri(['tools', '--bogus'])
    assert.equal(result.status, 2)
    assert.equal(result.stdout, '')
    assert.match(result.stderr, /^eitri: Unknown option '--bogus'.*\nUsage: eitri/)
    assert.doesNotMatch(result.stderr, /\n\s+at /)
  })

  it('ends quietly when its reader goes away (`eitri tools --json | head`), without a stack trace', async () => {
    const { spawn } = await import('node:child_process')
    const child = spawn(process.execPath, [EITRI_BIN, 'tools', '--json'], { stdio: 'pipe' })
    child.stdin.end()
    // The reader leaves before eitri writes: its first write fails with EPIPE.
    child.stdout.destroy()
    const result = await finished(child)
    assert.equal(result.stderr, '')
  })

  it('exits 1 when a call answers an error', async () => {
    await using scratch = await makeScratch()
    const result = await runEitri(['call', 'read_file', '{"path":"/etc/passwd"}', ...scratch.flags])
    assert.equal(result.status, 1)
    assert.match(result.stderr, /^path_outside_workspace: /)
  })

  it('exec runs one command in the jail, streams its output and exits with its status', async () => {
    await using scratch = await makeScratch({ 'in.txt': 'input\n' })
    const result = await runEitri([
      'exec',
      ...scratch.flags,
      '--',
      'bash',
      '-c',
      'cat in.txt; pwd; id -u; echo made > out.txt; echo warn >&2; exit 3',
    ])
    assert.equal(result.status, 3)
    const [content, where, uid] = result.stdout.trim().split('\n')
    assert.deepEqual([content, where], ['input', '/workspace'])
    assert.notEqual(uid, '0')
    assert.match(result.stderr, /warn/)
    const { readFile } = await import('node:fs/promises')
    assert.equal(await readFile(`${scratch.workspace}/out.txt`, 'utf8'), 'made\n')
  })

  it('exec whose reader goes away ends its command by SIGPIPE and exits 141, as bash reports `yes` in `yes | head -1`', async () => {
    await using scratch = await makeScratch()
    const { spawn } = await import('node:child_process')
    const eitri = [process.execPath, EITRI_BIN, 'exec', ...scratch.flags, '--']
      .map((word) => `'${word}'`)
      .join(' ')
    for (const command of ['yes', "bash -c 'yes | tr y n'"]) {
      const shell = spawn(
        'bash',
        ['-o', 'pipefail', '-c', `${eitri} ${command} | head -1; echo "status $?" >&2`],
        { stdio: 'pipe' },
      )
      shell.stdin.end()
      const result = await finished(shell)
      assert.match(result.stdout, /^[yn]\n$/)
      // Not 137 (killed), and no "Connection reset by peer" from a writer whose pipe was shut.
      assert.equal(result.stderr, 'status 141\n')
    }
  })

  it('exec of an npm install says the jail has no network and to install outside it', async () => {
    await using scratch = await makeScratch({ 'package.json': '{"name":"p","version":"1.0.0"}' })
    const args = ['exec', ...scratch.flags, '--', 'npm', 'install', 'left-pad-for-eitri-tests']
    const result = await runEitri(args)
    assert.equal(result.status, 1, result.stderr)
    assert.match(result.stderr, /ENOTCACHED/)
    assert.match(result.stderr, /\neitri: the jail has no network .*\(npm install\)/)
  })

  it('exec in a folder of a repository says programs see only that folder, and where to run it', async () => {
    await using scratch = await makeScratch({ 'src/a.js': 'a\n', 'package.json': '{}' })
    const { execFileSync } = await import('node:child_process')
    execFileSync('git', ['init', '-q', scratch.workspace])
    const inner = `${scratch.workspace}/src`
    const flags = ['--state-dir', scratch.stateDir, '--config', scratch.configPath]
    const result = await runEitri(['exec', '--workspace', inner, ...flags, '--', 'ls'])
    assert.equal(result.status, 0, result.stderr)
    assert.equal(result.stdout, 'a.js\n')
    assert.match(result.stderr, /inside the git repository .*run eitri in .* or give --workspace/)
    const atRoot = await runEitri(['exec', ...scratch.flags, '--', 'true'])
    assert.equal(atRoot.stderr, '')
  })

  it('exec without a command is a usage error', async () => {
    const result = await runEitri(['exec'])
    assert.equal(result.status, 2)
    assert.match(result.stderr, /exec needs a command after --/)
  })

  it('fork, call --fork, exec --fork, diff, merge, log and undo-merge work from the terminal', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'v1\n' })
    const { readFile } = await import('node:fs/promises')
    const forked = await runEitri(['fork', 'exp', ...scratch.flags])
    assert.equal(forked.status, 0, forked.stderr)
    assert.match(forked.stdout, /^f-[0-9a-f]{8} \(exp\)\n$/)
    assert.equal(
      (
        await runEitri([
          'call',
          'write_file',
          '{"path":"a.txt","content":"v2\\n"}',
          '--fork',
          'exp',
          ...scratch.flags,
        ])
      ).status,
      0,
    )
    assert.equal(
      (
        await runEitri([
          'exec',
          '--fork',
          'exp',
          ...scratch.flags,
          '--',
          'bash',
          '-c',
          'echo e > e.txt',
        ])
      ).status,
      0,
    )
    assert.equal(await readFile(`${scratch.workspace}/a.txt`, 'utf8'), 'v1\n')
    const diff = await runEitri(['diff', 'exp', ...scratch.flags])
    assert.match(diff.stdout, /^-v1$/m)
    assert.match(diff.stdout, /^\+e$/m)
    const merged = await runEitri(['merge', 'exp', ...scratch.flags])
    assert.equal(merged.status, 0, merged.stderr)
    assert.equal(await readFile(`${scratch.workspace}/a.txt`, 'utf8'), 'v2\n')
    assert.match((await runEitri(['log', 'main', ...scratch.flags])).stdout, /merge exp into main/)
    const undone = await runEitri(['undo-merge', ...scratch.flags])
    assert.equal(undone.status, 0, undone.stderr)
    // The person is told what state the fork is in and where its work goes on.
    assert.match(
      undone.stdout,
      /^Undid the merge of exp into main: a\.txt, e\.txt are as before it\.$/m,
    )
    assert.match(
      undone.stdout,
      /Fork exp stays merged and read-only; its changes go on in a new fork of main, exp-1: work there with --fork exp-1 .* eitri merge exp-1\./,
    )
    assert.equal(await readFile(`${scratch.workspace}/a.txt`, 'utf8'), 'v1\n')
    assert.match((await runEitri(['forks', ...scratch.flags])).stdout, /exp/)
    const open = JSON.parse((await runEitri(['forks', '--json', ...scratch.flags])).stdout) as {
      name: string
      state: string
      changes: number
      lastActivity: string
    }[]
    assert.deepEqual(
      open.map((fork) => [fork.name, fork.state, fork.changes]),
      [
        ['exp', 'merged', 2], // a.txt and e.txt
        ['exp-1', 'open', 2],
      ],
    )
    assert.ok(!Number.isNaN(Date.parse(open[0]?.lastActivity ?? '')))
    const again = await runEitri(['merge', 'exp-1', ...scratch.flags])
    assert.equal(again.status, 0, again.stderr)
    assert.equal(await readFile(`${scratch.workspace}/a.txt`, 'utf8'), 'v2\n')
    assert.equal(await readFile(`${scratch.workspace}/e.txt`, 'utf8'), 'e\n')
    assert.equal((await runEitri(['fork', 'second', ...scratch.flags])).status, 0)
    assert.equal((await runEitri(['discard', 'second', ...scratch.flags])).status, 0)
    assert.match(
      (await runEitri(['forks', ...scratch.flags])).stdout,
      /exp\s+merged\s+2 changed {2}last active .*\n.*exp-1\s+merged\s+2 changed .*\n.*second\s+discarded\s+0 changed/,
    )
    const pruned = await runEitri(['forks', '--prune', ...scratch.flags])
    assert.match(pruned.stderr, /Removed 3 fork\(s\) .*: exp, exp-1, second\./)
    assert.equal(pruned.stdout, 'No forks.\n')
  })

  it('serve on stdio exits when its input closes', async () => {
    await using scratch = await makeScratch()
    const result = await runEitri(['serve', ...scratch.flags])
    assert.equal(result.status, 0)
    assert.equal(result.stdout, '')
  })
})

describe('relative paths on the command line', () => {
  it('takes --state-dir and --config relative to where eitri was started, forks included', async () => {
    const { spawn } = await import('node:child_process')
    const { finished, EITRI_BIN } = await import('./helpers/eitri-process.ts')
    await using scratch = await makeScratch({ 'a.txt': 'hi\n' })
    const child = spawn(
      process.execPath,
      [
        EITRI_BIN,
        'call',
        'workspace_fork',
        '{"name":"x"}',
        '--workspace',
        'workspace',
        '--state-dir',
        'state',
        '--config',
        'config.json',
      ],
      { cwd: scratch.root, stdio: 'pipe' },
    )
    child.stdin.end()
    const { status, stdout, stderr } = await finished(child)
    assert.equal(status, 0, stderr)
    assert.match(stdout, /Forked main as x/)
  })
})
