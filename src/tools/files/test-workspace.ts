/**
 * @module tools/files/test-workspace
 * The fixture of the file tools' tests: a fresh temporary folder per test holding a workspace
 * and a sibling folder outside it, with every file tool bound to the workspace through the
 * whole contract (toolset, validation, policy). The folder is removed when the test ends.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { TestContext } from 'node:test'
import { createWorkspaceView } from '../../access/confined-workspace.ts'
import type { ErrorCode } from '../../errors/eitri-error.ts'
import { ToolRegistry } from '../../tool/tool-registry.ts'
import type { ToolResult } from '../../tool/tool-result.ts'
import { Toolset } from '../../tool/toolset.ts'
import { DirectoryTree } from '../../workspace/directory-tree.ts'
import { fileTools } from './index.ts'

/** One test's workspace and the tools bound to it. */
export interface TestWorkspace {
  /** The per-test temporary folder (a real path) holding `root` and `outside`. */
  readonly base: string
  /** The workspace folder's real host path. */
  readonly root: string
  /** A folder beside the workspace, holding `secret.txt`, that no tool may reach. */
  readonly outside: string
  /** Runs one file tool call through the toolset. */
  run(name: string, input: unknown): Promise<ToolResult>
  /** Writes a file of the workspace directly, creating folders. */
  write(relativePath: string, data: string | Uint8Array): Promise<void>
  /** Reads a file of the workspace directly. */
  read(relativePath: string): Promise<Buffer>
  /** Makes a symbolic link at `relativePath` pointing to `target`, as written. */
  link(relativePath: string, target: string): Promise<void>
  /** The host path of a workspace-relative path. */
  host(relativePath: string): string
}

/** What the outside folder's `secret.txt` holds. */
export const OUTSIDE_SECRET = 'OUTSIDE-SECRET-0451\n'

/** Builds a fresh workspace for test `t`, removed after it. */
export async function createTestWorkspace(
  t: TestContext,
  options: {
    readonly protectedPaths?: readonly string[]
    /** The tree over the workspace folder (a `DirectoryTree` that counts its calls, say). */
    readonly tree?: (root: string) => DirectoryTree
  } = {},
): Promise<TestWorkspace> {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-files-')))
  t.after(() => fs.rm(base, { recursive: true, force: true }))
  const root = path.join(base, 'workspace')
  const outside = path.join(base, 'outside')
  await fs.mkdir(root)
  await fs.mkdir(outside)
  await fs.writeFile(path.join(outside, 'secret.txt'), OUTSIDE_SECRET)
  const workspace = createWorkspaceView({
    tree: options.tree?.(root) ?? new DirectoryTree(root),
    ...(options.protectedPaths === undefined ? {} : { protectedPaths: options.protectedPaths }),
  })
  const toolset = new Toolset(
    new ToolRegistry(fileTools),
    fileTools.map((tool) => tool.name),
  )
  const host = (relativePath: string): string => path.join(root, relativePath)
  return {
    base,
    root,
    outside,
    run: (name, input) =>
      toolset.run({ name, input }, { signal: new AbortController().signal, workspace }),
    async write(relativePath, data) {
      await fs.mkdir(path.dirname(host(relativePath)), { recursive: true })
      await fs.writeFile(host(relativePath), data)
    },
    read: (relativePath) => fs.readFile(host(relativePath)),
    async link(relativePath, target) {
      await fs.mkdir(path.dirname(host(relativePath)), { recursive: true })
      await fs.symlink(target, host(relativePath))
    },
    host,
  }
}

/** Asserts that `result` succeeded and returns its content. */
export function successContent(result: ToolResult): string {
  assert.equal(result.type, 'success', `expected success, got: ${result.content}`)
  return result.content
}

/** Asserts that `result` is an error with `code` and returns its content. */
export function errorContent(result: ToolResult, code: ErrorCode): string {
  assert.equal(result.type, 'error', `expected an error, got: ${result.content}`)
  assert.equal(result.type === 'error' ? result.code : undefined, code, result.content)
  return result.content
}
