/**
 * Forks against the alternatives a user would pick, on the same trees in one run: eitri's fork
 * (a server watching main, so a fork costs what changed), `git worktree add` and `cp -r`, at
 * 100, 10,000 and 100,000 files; the first jailed command on a fork of 10,000 files; merging a
 * 10-file change into a 10,000-file base; a 1-file write on main between the snapshots taken
 * around every call that may change main, beside the bare write.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { createWorkspaceView, DirectoryTree } from '../src/index.ts'
import { Jail } from '../src/jail/jail.ts'
import { WorkspaceLines } from '../src/workspace/workspace-lines.ts'
import { micros, report } from './measure.ts'

const SIZES = [100, 10_000, 100_000]

function makeTree(root: string, files: number): void {
  for (let index = 0; index < files; index++) {
    const folder = path.join(root, `d${index % 100}`, `e${index % 7}`)
    fs.mkdirSync(folder, { recursive: true })
    fs.writeFileSync(path.join(folder, `f${index}.txt`), `content of file ${index}\n`)
  }
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

async function time(run: () => unknown, times: number): Promise<number> {
  const samples: number[] = []
  for (let index = 0; index < times; index++) {
    const start = performance.now()
    await run()
    samples.push((performance.now() - start) * 1000)
  }
  return median(samples)
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-bench-ws-'))
try {
  for (const size of SIZES) {
    const workspace = path.join(scratch, `ws-${size}`)
    makeTree(workspace, size)
    await using lines = await WorkspaceLines.open({
      main: new DirectoryTree(workspace),
      stateDir: path.join(scratch, `state-${size}`),
      watch: true,
    })
    await lines.commit('main')
    const forkTime = await time(() => lines.fork(), 20)
    // the same files in a git repository, for `git worktree add`
    const repository = path.join(scratch, `repo-${size}`)
    execFileSync('cp', ['-r', workspace, repository])
    execFileSync('git', ['-C', repository, 'init', '-q'])
    execFileSync('git', ['-C', repository, 'add', '-A'])
    execFileSync('git', [
      '-C',
      repository,
      '-c',
      'user.name=b',
      '-c',
      'user.email=b@b',
      'commit',
      '-qm',
      'base',
    ])
    const repeat = size >= 100_000 ? 2 : 5
    let worktrees = 0
    const worktreeTime = await time(
      () =>
        execFileSync('git', [
          '-C',
          repository,
          'worktree',
          'add',
          '-q',
          '--detach',
          path.join(scratch, `wt-${size}-${worktrees++}`),
        ]),
      repeat,
    )
    let copies = 0
    const copyTime = await time(
      () => execFileSync('cp', ['-r', workspace, path.join(scratch, `cp-${size}-${copies++}`)]),
      repeat,
    )
    report(`fork of ${size} files (nothing changed)`, forkTime, worktreeTime, 'git worktree add')
    report(`fork of ${size} files (nothing changed)`, forkTime, copyTime, 'cp -r')
    if (size === 10_000) {
      const fork = await lines.fork({ name: 'jailed' })
      const tree = await lines.tree(fork.id)
      await using jail = new Jail({ tree, view: createWorkspaceView({ tree }) })
      if (!(await jail.availability()).available) throw new Error('the jail is unavailable')
      const start = performance.now()
      await jail.run({ command: ['/bin/true'], access: 'workspace-write' })
      const firstCommand = (performance.now() - start) * 1000
      const secondStart = performance.now()
      await jail.run({ command: ['/bin/true'], access: 'workspace-write' })
      const secondCommand = (performance.now() - secondStart) * 1000
      process.stdout.write(
        `first jailed command on a fork of 10000 files: ${micros(firstCommand)} (goal < 50 ms); the next: ${micros(secondCommand)}\n`,
      )
      const merges: number[] = []
      for (let round = 0; round < 5; round++) {
        const change = await lines.fork()
        const changeTree = await lines.tree(change.id)
        for (let index = 0; index < 10; index++)
          await changeTree.writeFileAtomic(
            `d${index}/e${index % 7}/f${index}.txt`,
            Buffer.from(`round ${round}\n`),
          )
        const mergeStart = performance.now()
        const outcome = await lines.merge(change.id)
        merges.push((performance.now() - mergeStart) * 1000)
        if (outcome.type !== 'merged') throw new Error(`merge ${outcome.type}`)
      }
      const gitMerges: number[] = []
      for (let round = 0; round < 5; round++) {
        execFileSync('git', ['-C', repository, 'checkout', '-q', '-b', `change-${round}`])
        for (let index = 0; index < 10; index++)
          fs.writeFileSync(
            path.join(repository, `d${index}/e${index % 7}/f${index}.txt`),
            `round ${round}\n`,
          )
        execFileSync('git', [
          '-C',
          repository,
          '-c',
          'user.name=b',
          '-c',
          'user.email=b@b',
          'commit',
          '-qam',
          'change',
        ])
        execFileSync('git', ['-C', repository, 'checkout', '-q', '-'])
        const start = performance.now()
        execFileSync('git', [
          '-C',
          repository,
          '-c',
          'user.name=b',
          '-c',
          'user.email=b@b',
          'merge',
          '-q',
          '--no-edit',
          `change-${round}`,
        ])
        gitMerges.push((performance.now() - start) * 1000)
      }
      report(
        'merge a 10-file change into 10000 files',
        median(merges),
        median(gitMerges),
        'git merge in a checkout',
      )
      // What "nothing an agent does is unrecoverable" costs a call: a snapshot of main before
      // and after a 1-file write (the watcher knows what changed), beside the bare write.
      let round = 0
      const target = 'd3/e3/f3.txt'
      const bareWrite = await time(
        () => lines.main.writeFileAtomic(target, Buffer.from(`bare ${round++}\n`)),
        20,
      )
      await lines.snapshots.around({ tool: 'bench' }, async () => undefined)
      const snapshotted = await time(
        () =>
          lines.snapshots.around({ tool: 'write_file', detail: target }, () =>
            lines.main.writeFileAtomic(target, Buffer.from(`snapshotted ${round++}\n`)),
          ),
        20,
      )
      report(
        'a 1-file write between snapshots, 10000 files',
        snapshotted,
        bareWrite,
        'the bare write',
      )
    }
  }
} finally {
  fs.rmSync(scratch, { recursive: true, force: true })
}
