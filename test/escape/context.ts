/**
 * The per-attack context: fresh folders, a jail over the workspace built as
 * src/jail/test-jail.ts builds it, the jailed and plain runners, and cleanup.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { RepositoryPrograms } from '../../src/access/git-metadata/repository-programs.ts'
import { createWorkspaceView } from '../../src/access/confined-workspace.ts'
import { Jail } from '../../src/jail/jail.ts'
import { ToolRegistry } from '../../src/tool/tool-registry.ts'
import type { ToolResult } from '../../src/tool/tool-result.ts'
import { Toolset } from '../../src/tool/toolset.ts'
import type { WorkspaceView } from '../../src/ports/workspace-view.ts'
import { fileTools } from '../../src/tools/files/index.ts'
import { DirectoryTree } from '../../src/workspace/directory-tree.ts'
import {
  assertStarted,
  spawnPlain,
  STARTED,
  type Attack,
  type AttackContext,
  type Caller,
} from './helpers.ts'

/** A jailed run that hangs is stopped after this long, so no attack hangs the suite. */
const JAILED_TIMEOUT_MS = 15_000

/** Builds the context of one attack; `close` removes everything it made. */
export function createContext(
  caller: Caller,
  attack: Attack,
): AttackContext & { close(): Promise<void> } {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `eitri-escape-${attack.id}-`)))
  const workspace = path.join(base, 'workspace')
  const outside = path.join(base, 'outside')
  for (const folder of [workspace, outside]) fs.mkdirSync(folder)
  // Readable by the jail's user: a root caller's jails run as nobody.
  for (const folder of [base, workspace, outside]) fs.chmodSync(folder, 0o755)
  const jails: Jail[] = []
  const cleanups: (() => unknown)[] = []
  const jailOver = (folder: string): { jail: Jail; view: WorkspaceView } => {
    const tree = new DirectoryTree(folder)
    // As the workshop builds it: what the repository's configuration names as code is protected.
    const repositories = new RepositoryPrograms({ root: tree.root })
    const view = createWorkspaceView({
      tree,
      programs: (workTrees) => repositories.programPaths(workTrees),
    })
    // Attacks run in the warm jail (a session's usual path) unless they ask for a fresh one.
    const jail = new Jail({ tree, view, waitForWarmJail: true })
    jails.push(jail)
    return { jail, view }
  }
  const main = jailOver(workspace)
  return {
    caller,
    marker: `eitri-escape-${attack.id}-${process.pid}-${randomBytes(4).toString('hex')}`,
    base,
    workspace,
    outside,
    jail: main.jail,
    view: main.view,
    async jailed(script, options = {}) {
      const { fresh = false, expectStart = true, jail = main.jail, ...request } = options
      const result = await jail.run({
        command: ['/bin/bash', '-c', `echo ${STARTED}; ${script}`],
        access: 'workspace-write',
        timeoutMs: JAILED_TIMEOUT_MS,
        ...(fresh ? { limits: {} } : {}),
        ...request,
      })
      if (expectStart) assertStarted(result, `attack ${attack.id}`)
      return result
    },
    plain: (script, options = {}) => spawnPlain(script, { cwd: workspace, ...options }),
    jailOver,
    defer: (cleanup) => cleanups.push(cleanup),
    async close() {
      for (const jail of jails) await jail.close()
      for (const cleanup of cleanups.reverse()) {
        try {
          await cleanup()
        } catch {
          // best effort: the folder goes below anyway
        }
      }
      fs.rmSync(base, { recursive: true, force: true })
    },
  }
}

/** The host file tools over a view, run through a toolset as a model's calls are. */
export function fileToolsOver(
  view: WorkspaceView,
): (name: string, input: unknown) => Promise<ToolResult> {
  const toolset = new Toolset(
    new ToolRegistry(fileTools),
    fileTools.map((tool) => tool.name),
  )
  return (name, input) =>
    toolset.run({ name, input }, { signal: new AbortController().signal, workspace: view })
}
