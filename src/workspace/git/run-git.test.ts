import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { EitriError } from '../../errors/eitri-error.ts'
import { gitEnvironment, runGit } from './run-git.ts'

/** git as a person runs it: no global or system configuration, a fixed identity. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    [
      '-c',
      'user.name=p',
      '-c',
      'user.email=p@p',
      '-c',
      'init.defaultBranch=main',
      '-c',
      'protocol.file.allow=always',
      ...args,
    ],
    {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
    },
  ).trim()
}

/**
 * A repository holding a submodule `sub` whose own configuration runs programs writing a
 * marker file outside the repository: an fsmonitor, and a clean filter on every file.
 */
async function plant(t: TestContext): Promise<{ root: string; markers: string }> {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-run-git-')))
  t.after(() => fs.rm(base, { recursive: true, force: true }))
  const markers = path.join(base, 'markers')
  const upstream = path.join(base, 'upstream')
  const root = path.join(base, 'root')
  await fs.mkdir(markers)
  await fs.mkdir(upstream)
  await fs.mkdir(root)
  git(upstream, 'init', '-q')
  await fs.writeFile(path.join(upstream, 'keep.txt'), 'kept\n')
  git(upstream, 'add', '-A')
  git(upstream, 'commit', '-qm', 'library')
  git(root, 'init', '-q')
  git(root, 'submodule', '--quiet', 'add', upstream, 'sub')
  git(root, 'commit', '-qm', 'first')
  const sub = path.join(root, 'sub')
  await fs.writeFile(path.join(sub, 'fsmon.sh'), `#!/bin/sh\necho ran > ${markers}/fsmonitor\n`)
  await fs.chmod(path.join(sub, 'fsmon.sh'), 0o755)
  await fs.writeFile(path.join(sub, 'clean.sh'), `#!/bin/sh\necho ran > ${markers}/filter\ncat\n`)
  await fs.writeFile(path.join(sub, '.gitattributes'), '* filter=marker\n')
  await fs.appendFile(
    path.join(root, '.git/modules/sub/config'),
    '[core]\n\tfsmonitor = ./fsmon.sh\n[filter "marker"]\n\tclean = sh ./clean.sh\n',
  )
  return { root, markers }
}

/** Makes `sub/keep.txt` look changed (a new time): a git asking whether sub is dirty reads it. */
async function touch(root: string, seconds: number): Promise<void> {
  const time = new Date(Date.now() + seconds * 1000)
  await fs.utimes(path.join(root, 'sub/keep.txt'), time, time)
}

describe("eitri's git environment", () => {
  it('a status over a repository with a planted submodule runs none of its programs', async (t) => {
    const { root, markers } = await plant(t)
    // Positive control: git as a person runs it enters the submodule and runs both programs.
    await touch(root, 5)
    git(root, 'status', '--porcelain')
    assert.deepEqual((await fs.readdir(markers)).sort(), ['filter', 'fsmonitor'])
    for (const marker of await fs.readdir(markers)) await fs.rm(path.join(markers, marker))
    // The same command under eitri's environment runs nothing.
    await touch(root, 10)
    const status = await runGit({ gitDir: path.join(root, '.git'), workTree: root }, [
      'status',
      '--porcelain',
    ])
    assert.equal(status.status, 0)
    assert.deepEqual(await fs.readdir(markers), [])
  })

  it('adds its own settings after the shared ones, numbered as git reads them', () => {
    const env = gitEnvironment({ gitDir: '/nowhere' })
    const count = Number(env['GIT_CONFIG_COUNT'])
    const settings = new Map<string, string>()
    for (let index = 0; index < count; index++) {
      const key = env[`GIT_CONFIG_KEY_${index}`]
      const value = env[`GIT_CONFIG_VALUE_${index}`]
      assert.ok(key !== undefined && value !== undefined, `setting ${index} is given`)
      settings.set(key, value)
    }
    assert.equal(settings.get('core.hooksPath'), '/dev/null')
    assert.equal(settings.get('core.fsmonitor'), 'false')
    assert.equal(settings.get('diff.ignoreSubmodules'), 'all')
    assert.equal(env[`GIT_CONFIG_KEY_${count}`], undefined)
  })

  it('a cancelled git is killed and rejects with cancelled; a flood past the bound is refused', async (t) => {
    const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-run-git-')))
    t.after(() => fs.rm(base, { recursive: true, force: true }))
    git(base, 'init', '-q', '--bare', 'repo.git')
    const target = { gitDir: path.join(base, 'repo.git') }
    const blob = (
      await runGit(target, ['hash-object', '-w', '--stdin'], { input: 'x'.repeat(4096) })
    ).stdout
      .toString()
      .trim()
    // Aborted while git still reads its input: killed, and the call says so.
    const controller = new AbortController()
    const slow = runGit(target, ['cat-file', '--batch'], {
      input: `${blob}\n`.repeat(200_000),
      signal: controller.signal,
    })
    controller.abort()
    await assert.rejects(
      slow,
      (error: unknown) => EitriError.isInstance(error) && error.code === 'cancelled',
    )
    const capped = await runGit(target, ['cat-file', '--batch'], {
      input: `${blob}\n`.repeat(50),
      maxStdoutBytes: 10_000,
      check: false,
    })
    assert.equal(capped.overflowed, true)
    assert.equal(capped.status, -1)
    assert.ok(capped.stdout.byteLength <= 10_000)
    // Positive control: without the cap the same command answers in full.
    const full = await runGit(target, ['cat-file', '--batch'], { input: `${blob}\n`.repeat(50) })
    assert.ok(full.stdout.byteLength > 50 * 4096)
  })
})
