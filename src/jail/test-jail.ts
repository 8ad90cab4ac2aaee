/**
 * @module jail/test-jail
 * A jail over a fresh scratch workspace for tests. Fails (never skips) when the jail is
 * unavailable, saying how to install bubblewrap.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { TestContext } from 'node:test'
import { createWorkspaceView } from '../access/confined-workspace.ts'
import type { WorkspaceView } from '../ports/workspace-view.ts'
import { DirectoryTree } from '../workspace/directory-tree.ts'
import { Jail, type JailOptions } from './jail.ts'

/** A jail and its workspace. */
export interface JailFixture {
  readonly jail: Jail
  readonly workspace: string
  readonly base: string
  readonly view: WorkspaceView
}

/** Builds a workspace from `files` and a jail over it; both are removed after the test. */
export async function jailFixture(
  t: TestContext,
  files: Record<string, string> = {},
  options: Partial<JailOptions> & {
    privateInside?: string[]
    /** The workspace folder's tree, when a test needs its own (one whose disk fails). */
    treeOf?: (workspace: string) => DirectoryTree
  } = {},
): Promise<JailFixture> {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-jail-test-')))
  const workspace = path.join(base, 'workspace')
  await fs.mkdir(workspace)
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(workspace, name)), { recursive: true })
    await fs.writeFile(path.join(workspace, name), content)
  }
  const privatePaths = (options.privateInside ?? []).map((relative) =>
    path.join(workspace, relative),
  )
  const { treeOf, ...jailOptions } = options
  const tree = treeOf?.(workspace) ?? new DirectoryTree(workspace)
  const view = createWorkspaceView({
    tree,
    privatePaths,
    protectedPaths: options.protectedPaths ?? [],
  })
  // These tests are about the warm jail unless they say otherwise: their commands wait for it.
  const jail = new Jail({ tree, view, privatePaths, waitForWarmJail: true, ...jailOptions })
  t.after(async () => {
    await jail.close()
    await fs.rm(base, { recursive: true, force: true })
  })
  return { jail, workspace, base, view }
}

/** Fails the test with the fix when the jail cannot run here. */
export async function assertJailAvailable(jail: Jail): Promise<void> {
  const availability = await jail.availability()
  assert.ok(
    availability.available,
    availability.available
      ? ''
      : `The jail is unavailable: ${availability.reason}. Install bubblewrap: apt-get install bubblewrap (${availability.fix})`,
  )
}
