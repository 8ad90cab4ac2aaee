/**
 * A restore killed at any point leaves main, files and git references alike, wholly as the
 * agent left it or wholly restored, never mixed, once the workspace is opened again: at each
 * step of the journal and at random moments.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { DirectoryTree } from '../src/workspace/directory-tree.ts'
import { WorkspaceLines } from '../src/workspace/workspace-lines.ts'
import { crashProcess } from './helpers/crash-process.ts'

const CRASHER = fileURLToPath(new URL('./fixtures/restore-crash.ts', import.meta.url))
const FILES = 12

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=p', '-c', 'user.email=p@p', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }).trim()
}

/**
 * A git workspace of FILES files where one call (between snapshots 1 and 2) rewrote every
 * file, deleted one, added one and deleted the branch `keep`.
 */
async function prepare(): Promise<{ base: string; workspace: string; stateDir: string }> {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-restore-crash-')))
  const workspace = path.join(base, 'workspace')
  const stateDir = path.join(base, 'state')
  await fs.mkdir(workspace)
  for (let index = 0; index < FILES; index++)
    await fs.writeFile(path.join(workspace, `file-${index}.txt`), `before ${index}\n`)
  await fs.writeFile(path.join(workspace, 'deleted-by-call.txt'), 'before\n')
  git(workspace, 'init', '-q', '-b', 'main')
  git(workspace, 'commit', '-q', '--allow-empty', '-m', 'one')
  git(workspace, 'branch', 'keep')
  const lines = await WorkspaceLines.open({ main: new DirectoryTree(workspace), stateDir })
  await lines.snapshots.around({ tool: 'shell', detail: 'the call' }, async () => {
    for (let index = 0; index < FILES; index++)
      await fs.writeFile(path.join(workspace, `file-${index}.txt`), `agent ${index}\n`)
    await fs.writeFile(path.join(workspace, 'added-by-call.txt'), 'agent\n')
    await fs.rm(path.join(workspace, 'deleted-by-call.txt'))
    git(workspace, 'branch', '-D', 'keep')
  })
  await lines.close()
  return { base, workspace, stateDir }
}

/** 'agent', 'restored', or a description of the mixture found. */
async function stateOfMain(workspace: string): Promise<string> {
  const seen = new Set<string>()
  for (let index = 0; index < FILES; index++) {
    const content = await fs.readFile(path.join(workspace, `file-${index}.txt`), 'utf8')
    seen.add(content.startsWith('before') ? 'restored' : 'agent')
  }
  const exists = (name: string) =>
    fs.access(path.join(workspace, name)).then(
      () => true,
      () => false,
    )
  seen.add((await exists('added-by-call.txt')) ? 'agent' : 'restored')
  seen.add((await exists('deleted-by-call.txt')) ? 'restored' : 'agent')
  let branch = true
  try {
    git(workspace, 'rev-parse', '--verify', '-q', 'refs/heads/keep')
  } catch {
    branch = false
  }
  seen.add(branch ? 'restored' : 'agent')
  const leftovers = (await fs.readdir(workspace)).filter(
    (name) => name.includes('.eitri-') && name.endsWith('.tmp'),
  )
  if (leftovers.length > 0) seen.add(`temporary files left: ${leftovers.join(', ')}`)
  return [...seen].join(' + ')
}

async function reopenAndCheck(workspace: string, stateDir: string): Promise<string> {
  const lines = await WorkspaceLines.open({ main: new DirectoryTree(workspace), stateDir })
  await lines.close()
  return stateOfMain(workspace)
}

describe('a restore killed at a fault point', () => {
  const steps = [
    'planned',
    'journal-written',
    'file-written:0',
    `file-written:${Math.floor(FILES / 2)}`,
    'files-written',
    'ref-moved',
    'none',
  ]
  for (const step of steps) {
    it(`at ${step}: wholly as the agent left it or wholly restored after the next open`, async () => {
      const { base, workspace, stateDir } = await prepare()
      try {
        await crashProcess(CRASHER, [workspace, stateDir, step])
        const state = await reopenAndCheck(workspace, stateDir)
        assert.equal(state, step === 'planned' ? 'agent' : 'restored')
      } finally {
        await fs.rm(base, { recursive: true, force: true })
      }
    })
  }
})

describe('a restore killed at random moments', () => {
  it('is never found mixed, in 12 runs spread over the whole restore', async () => {
    const undisturbed = await prepare()
    let span: number
    try {
      span = await crashProcess(CRASHER, [undisturbed.workspace, undisturbed.stateDir, 'none'])
    } finally {
      await fs.rm(undisturbed.base, { recursive: true, force: true })
    }
    const outcomes: string[] = []
    for (let run = 0; run < 12; run++) {
      const { base, workspace, stateDir } = await prepare()
      try {
        const delay = Math.floor(((run + Math.random()) / 12) * span)
        await crashProcess(CRASHER, [workspace, stateDir, 'none'], delay)
        outcomes.push(await reopenAndCheck(workspace, stateDir))
      } finally {
        await fs.rm(base, { recursive: true, force: true })
      }
    }
    assert.deepEqual(
      outcomes.filter((outcome) => outcome !== 'agent' && outcome !== 'restored'),
      [],
      outcomes.join(', '),
    )
    assert.ok(outcomes.includes('agent') && outcomes.includes('restored'), outcomes.join(', '))
  })
})
