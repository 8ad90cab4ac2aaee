/**
 * A fork's kept layer (ignored build outputs, git's files) outlives its commands on the host's
 * disk, so what it holds is bounded (`jail.maxKeptBytes`): a program that builds past the bound
 * keeps nothing of that build, the answer says why and what to do, and what was kept before
 * stays. The bound holds across processes (a restarted eitri measures the layer again), and
 * removing kept files makes room. Real bubblewrap, real CLI processes.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { committedProject } from './helpers/committed-project.ts'
import { runEitri } from './helpers/eitri-process.ts'
import { layerFolder } from './helpers/fork-keep-layer.ts'

const MIB = 1024 * 1024

/** The disk the kept layer takes, as `du` counts it (allocated bytes). */
function diskUse(folder: string): number {
  return Number(
    execFileSync('du', ['-s', '--block-size=1', folder], { encoding: 'utf8' }).split('\t')[0],
  )
}

describe('a fork’s kept layer is bounded', () => {
  it('keeps a build under jail.maxKeptBytes, refuses one past it with the reason, across restarts', async () => {
    await using scratch = await committedProject({ '.gitignore': 'dist/\n', 'src/a.js': 'a\n' })
    await fs.writeFile(scratch.configPath, JSON.stringify({ jail: { maxKeptBytes: 4 * MIB } }))
    const forked = await runEitri(['fork', 'build', ...scratch.flags])
    assert.equal(forked.status, 0, forked.stderr)
    const id = forked.stdout.split(' ')[0] ?? ''
    const exec = (command: string) =>
      runEitri(['exec', '--fork', 'build', ...scratch.flags, '--', 'bash', '-c', command])
    // Real bytes (not sparse): the kept layer's disk use is what is bounded.
    const write = (name: string, mib: number) =>
      `mkdir -p dist && head -c ${mib * MIB} /dev/urandom > dist/${name}`

    // Positive control: a build under the bound is kept, and a later process sees it.
    const small = await exec(write('small', 1))
    assert.equal(small.status, 0, small.stderr)
    assert.doesNotMatch(small.stderr + small.stdout, /not kept/)
    const seen = await exec('wc -c < dist/small')
    assert.equal(seen.stdout.trim(), String(MIB))
    // The kept layer's size is recorded, so a new process need not walk it: within a few
    // folders' blocks of what `du` finds.
    const folder = await layerFolder(scratch, id)
    const recorded = JSON.parse(
      await fs.readFile(path.join(folder, 'kept-bytes.json'), 'utf8'),
    ) as {
      bytes: number
    }
    assert.ok(Math.abs(recorded.bytes - diskUse(path.join(folder, 'kept'))) <= 16 * 1024)

    // Past the bound (measured again by this new process): nothing of it is kept, and it says so.
    const big = await exec(write('big', 4))
    const told = big.stderr + big.stdout
    assert.match(
      told,
      /dist: not kept in the jail: with it, what this fork's jail keeps would take 5\.\d MiB of disk|dist: not kept in the jail: with it, what this fork's jail keeps would take 5 MiB of disk/,
    )
    assert.match(told, /over the 4 MiB it may keep \(jail\.maxKeptBytes in eitri's configuration\)/)
    const after = await exec('ls dist')
    assert.equal(after.stdout, 'small\n', 'the refused build is gone, the earlier one stays')
    const kept = path.join(folder, 'kept')
    assert.ok(diskUse(kept) < 4 * MIB, `the kept layer stays under the bound (${diskUse(kept)})`)

    // A record that cannot be read is measured again: the bound still holds.
    await fs.writeFile(path.join(folder, 'kept-bytes.json'), '{"bytes": "lots"}')
    assert.match((await exec(write('big', 4))).stderr, /dist: not kept in the jail/)
    // Removing what is kept makes room: the same build now fits.
    const again = await exec(`rm -rf dist && ${write('big', 3)}`)
    assert.doesNotMatch(again.stderr + again.stdout, /not kept/)
    assert.equal((await exec('ls dist')).stdout, 'big\n')
    assert.ok(diskUse(kept) < 4 * MIB)
  })

  it('a folder made anew over a kept one replaces it: rm -rf dist && rebuild keeps only the rebuild', async () => {
    await using scratch = await committedProject({ '.gitignore': 'dist/\n', 'src/a.js': 'a\n' })
    assert.equal((await runEitri(['fork', 'rebuild', ...scratch.flags])).status, 0)
    const exec = (command: string) =>
      runEitri(['exec', '--fork', 'rebuild', ...scratch.flags, '--', 'bash', '-c', command])
    assert.equal((await exec('mkdir -p dist/sub && touch dist/old dist/sub/old')).status, 0)
    // The harmless variant: adding to a kept folder keeps what was there.
    assert.equal((await exec('touch dist/added')).status, 0)
    assert.equal((await exec('ls dist')).stdout, 'added\nold\nsub\n')
    // A deeper folder made anew, then the whole build: nothing deleted comes back.
    assert.equal((await exec('rm -rf dist/sub && mkdir dist/sub && touch dist/sub/new')).status, 0)
    assert.equal((await exec('ls dist/sub')).stdout, 'new\n')
    assert.equal((await exec('rm -rf dist && mkdir dist && touch dist/fresh')).status, 0)
    assert.equal((await exec('ls -R dist')).stdout, 'dist:\nfresh\n')
  })

  it('bounds a fork’s commits too: git’s files are kept under the same bound', async () => {
    await using scratch = await committedProject({ '.gitignore': 'dist/\n', 'src/a.js': 'a\n' })
    await fs.writeFile(scratch.configPath, JSON.stringify({ jail: { maxKeptBytes: 2 * MIB } }))
    assert.equal((await runEitri(['fork', 'big', ...scratch.flags])).status, 0)
    const exec = (command: string) =>
      runEitri(['exec', '--fork', 'big', ...scratch.flags, '--', 'bash', '-c', command])
    const commit =
      'git -c user.name=a -c user.email=a@e commit -qm "in the fork" && git log -1 --format=%s'
    // Positive control: a small commit is kept.
    const small = await exec(`echo b > src/b.js && git add src/b.js && ${commit}`)
    assert.equal(small.status, 0, small.stderr)
    assert.equal((await exec('git log -1 --format=%s')).stdout, 'in the fork\n')
    // A commit of 3 MiB of random bytes (git cannot compress them) passes the bound.
    const big = await exec(
      `head -c ${3 * MIB} /dev/urandom > src/blob.bin && git add src/blob.bin && ${commit.replace('in the fork', 'big')}`,
    )
    assert.match(
      big.stderr + big.stdout,
      /\.git: not kept in the jail: .* over the 2 MiB it may keep/,
    )
    assert.equal((await exec('git log -1 --format=%s')).stdout, 'in the fork\n')
  })
})
