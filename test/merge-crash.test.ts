/**
 * A merge into main killed at any point leaves main wholly before or wholly after, never mixed,
 * once the workspace is opened again: at each step of the journal (deterministic fault points)
 * and at random moments.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { DirectoryTree } from '../src/workspace/directory-tree.ts'
import { WorkspaceLines } from '../src/workspace/workspace-lines.ts'
import { crashProcess } from './helpers/crash-process.ts'

const CRASHER = fileURLToPath(new URL('./fixtures/merge-crash.ts', import.meta.url))
const FILES = 12

/** A workspace of FILES files and a fork named `prepared` that changes every one of them. */
async function prepare(): Promise<{ base: string; workspace: string; stateDir: string }> {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-crash-')))
  const workspace = path.join(base, 'workspace')
  const stateDir = path.join(base, 'state')
  await fs.mkdir(workspace)
  for (let index = 0; index < FILES; index++)
    await fs.writeFile(path.join(workspace, `file-${index}.txt`), `before ${index}\n`)
  await fs.writeFile(path.join(workspace, 'deleted-by-fork.txt'), 'before\n')
  const lines = await WorkspaceLines.open({ main: new DirectoryTree(workspace), stateDir })
  await lines.fork({ name: 'prepared' })
  const tree = await lines.tree('prepared')
  for (let index = 0; index < FILES; index++)
    await tree.writeFileAtomic(`file-${index}.txt`, Buffer.from(`after ${index}\n`))
  await tree.writeFileAtomic('added-by-fork.txt', Buffer.from('after\n'))
  await tree.remove('deleted-by-fork.txt')
  await lines.close()
  return { base, workspace, stateDir }
}

/** 'before', 'after', or a description of the mixture found. */
async function stateOfMain(workspace: string): Promise<string> {
  const seen = new Set<string>()
  for (let index = 0; index < FILES; index++) {
    const content = await fs.readFile(path.join(workspace, `file-${index}.txt`), 'utf8')
    seen.add(content.startsWith('after') ? 'after' : 'before')
  }
  seen.add(
    (await fs.access(path.join(workspace, 'added-by-fork.txt')).then(
      () => true,
      () => false,
    ))
      ? 'after'
      : 'before',
  )
  seen.add(
    (await fs.access(path.join(workspace, 'deleted-by-fork.txt')).then(
      () => true,
      () => false,
    ))
      ? 'before'
      : 'after',
  )
  const leftovers = (await fs.readdir(workspace)).filter(
    (name) => name.includes('.eitri-') && name.endsWith('.tmp'),
  )
  if (leftovers.length > 0) seen.add(`temporary files left: ${leftovers.join(', ')}`)
  return [...seen].join(' + ')
}

/** Runs the merging process; answers how long it ran after it began merging, in ms. */
function crash(
  workspace: string,
  stateDir: string,
  step: string,
  killAfterMs?: number,
): Promise<number> {
  return crashProcess(CRASHER, [workspace, stateDir, step], killAfterMs)
}

async function reopenAndCheck(workspace: string, stateDir: string): Promise<string> {
  const lines = await WorkspaceLines.open({ main: new DirectoryTree(workspace), stateDir })
  await lines.close()
  return stateOfMain(workspace)
}

describe('a merge killed at a fault point', () => {
  const steps = [
    'planned',
    'journal-written',
    'file-written:0',
    `file-written:${Math.floor(FILES / 2)}`,
    `file-written:${FILES}`,
    'files-written',
    'ref-moved',
    'none',
  ]
  for (const step of steps) {
    it(`at ${step}: wholly before or wholly after after the next open`, async () => {
      const { base, workspace, stateDir } = await prepare()
      try {
        await crash(workspace, stateDir, step)
        const state = await reopenAndCheck(workspace, stateDir)
        const expected = step === 'planned' ? 'before' : 'after'
        assert.equal(state, expected)
      } finally {
        await fs.rm(base, { recursive: true, force: true })
      }
    })
  }
})

describe('a merge killed at random moments', () => {
  it('is never found mixed, in 24 runs spread over the whole merge', async () => {
    // How long an undisturbed merge runs, so the kills land before, during and after it.
    const undisturbed = await prepare()
    let span: number
    try {
      span = await crash(undisturbed.workspace, undisturbed.stateDir, 'none')
    } finally {
      await fs.rm(undisturbed.base, { recursive: true, force: true })
    }
    const outcomes: string[] = []
    for (let run = 0; run < 24; run++) {
      const { base, workspace, stateDir } = await prepare()
      try {
        await crash(workspace, stateDir, 'none', Math.floor(((run + Math.random()) / 24) * span))
        outcomes.push(await reopenAndCheck(workspace, stateDir))
      } finally {
        await fs.rm(base, { recursive: true, force: true })
      }
    }
    assert.deepEqual(
      outcomes.filter((outcome) => outcome !== 'before' && outcome !== 'after'),
      [],
      outcomes.join(', '),
    )
    // Both ends were reached: kills landed before the journal and after it, not all on one side.
    assert.ok(outcomes.includes('before') && outcomes.includes('after'), outcomes.join(', '))
  })
})
