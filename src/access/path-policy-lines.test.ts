/**
 * The path policy is one function of (line, path): the same table gives the same answers on
 * main (a real folder) and on a fork (a tree in the history) with the same content.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { linesFixture } from '../workspace/test-lines.ts'
import type { WorkspaceTree } from '../workspace/workspace-tree.ts'
import { createWorkspaceView } from './confined-workspace.ts'

interface Row {
  readonly path: string
  readonly intent: 'read' | 'write'
  /** The resolved path, or the refusal's code. */
  readonly expect: string
}

const TABLE: readonly Row[] = [
  { path: 'a.txt', intent: 'read', expect: 'a.txt' },
  { path: './dir/../a.txt', intent: 'read', expect: 'a.txt' },
  { path: 'dir/b.txt', intent: 'write', expect: 'dir/b.txt' },
  { path: 'missing/new.txt', intent: 'write', expect: 'missing/new.txt' },
  { path: '', intent: 'read', expect: '' },
  { path: '../outside', intent: 'read', expect: 'path_outside_workspace' },
  { path: '/etc/passwd', intent: 'read', expect: 'path_outside_workspace' },
  { path: '/workspace/a.txt', intent: 'read', expect: 'a.txt' },
  { path: 'inside-link', intent: 'read', expect: 'dir/b.txt' },
  { path: 'inside-link', intent: 'write', expect: 'dir/b.txt' },
  { path: 'up-link/x', intent: 'read', expect: 'path_outside_workspace' },
  { path: 'etc-link/passwd', intent: 'read', expect: 'path_outside_workspace' },
  { path: 'missing/../up-link/x', intent: 'write', expect: 'path_outside_workspace' },
  { path: '.git/hooks/pre-commit', intent: 'write', expect: 'protected_path' },
  { path: '.git/hooks/pre-commit', intent: 'read', expect: '.git/hooks/pre-commit' },
  { path: 'sub/.envrc', intent: 'write', expect: 'protected_path' },
  { path: '.VSCODE/tasks.json', intent: 'write', expect: 'protected_path' },
  { path: 'hooks-link/pre-commit', intent: 'write', expect: 'protected_path' },
  { path: 'bad\0name', intent: 'read', expect: 'invalid_input' },
]

async function answers(tree: WorkspaceTree): Promise<string[]> {
  const view = createWorkspaceView({ tree })
  const out: string[] = []
  for (const row of TABLE) {
    try {
      out.push(await view.resolve(row.path, row.intent))
    } catch (error) {
      out.push((error as { code: string }).code)
    }
  }
  return out
}

/** The same content in a folder and in a fork: files, links in, links out, a git folder. */
async function populate(tree: WorkspaceTree): Promise<void> {
  await tree.writeFileAtomic('a.txt', Buffer.from('a'))
  await tree.writeFileAtomic('dir/b.txt', Buffer.from('b'))
  await tree.makeFolder('.git/hooks')
  await tree.writeFileAtomic('.git/hooks/keep', Buffer.from(''))
  await tree.createSymlink('inside-link', 'dir/b.txt')
  await tree.createSymlink('up-link', '../..')
  await tree.createSymlink('etc-link', '/etc')
  await tree.createSymlink('hooks-link', '.git/hooks')
}

describe('one path policy for main and a fork', () => {
  it('answers the whole table the same on both, as expected', async (t) => {
    const { lines, workspace } = await linesFixture(t)
    await lines.fork({ name: 'twin' })
    const fork = await lines.tree('twin')
    await populate(lines.main)
    await populate(fork)
    const onMain = await answers(lines.main)
    const onFork = await answers(fork)
    assert.deepEqual(
      onMain,
      TABLE.map((row) => row.expect),
    )
    assert.deepEqual(onFork, onMain)
    assert.ok(
      (await fs.lstat(path.join(workspace, 'up-link'))).isSymbolicLink(),
      'the links are real on main',
    )
  })
})
