/**
 * @module workspace/test-lines
 * A workspace folder with its lines, for tests; removed afterwards.
 */
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { TestContext } from 'node:test'
import { DirectoryTree } from './directory-tree.ts'
import { WorkspaceLines, type LinesOptions } from './workspace-lines.ts'

/** A fresh workspace holding `files`, and its lines. */
export async function linesFixture(
  t: TestContext,
  files: Record<string, string> = {},
  options: Partial<LinesOptions> = {},
) {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-lines-')))
  const workspace = path.join(base, 'workspace')
  const stateDir = path.join(base, 'state')
  await fs.mkdir(workspace)
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(workspace, name)), { recursive: true })
    await fs.writeFile(path.join(workspace, name), content)
  }
  const lines = await WorkspaceLines.open({
    main: new DirectoryTree(workspace),
    stateDir,
    ...options,
  })
  t.after(async () => {
    await lines.close()
    await fs.rm(base, { recursive: true, force: true })
  })
  const live = (name: string) =>
    fs.readFile(path.join(workspace, name), 'utf8').catch(() => undefined)
  return { base, workspace, stateDir, lines, live }
}
