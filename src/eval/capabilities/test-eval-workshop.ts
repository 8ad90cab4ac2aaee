/**
 * @module eval/capabilities/test-eval-workshop
 * A workshop over a scratch workspace for the capability tests, with a configuration file of
 * the test's choosing; `run` calls js_eval through the whole tool contract.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { ErrorCode } from '../../errors/eitri-error.ts'
import type { ToolResult } from '../../tool/tool-result.ts'
import { openWorkshop, type Workshop, type WorkshopOptions } from '../../workshop/workshop.ts'

/** The folders of one test. */
export interface Scratch {
  readonly root: string
  readonly workspace: string
  readonly stateDir: string
  readonly configPath: string
  cleanup(): Promise<void>
}

async function makeScratch(files: Record<string, string>): Promise<Scratch> {
  const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-eval-')))
  const workspace = path.join(root, 'workspace')
  await fs.mkdir(workspace)
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(workspace, name)), { recursive: true })
    await fs.writeFile(path.join(workspace, name), content)
  }
  return {
    root,
    workspace,
    stateDir: path.join(root, 'state'),
    configPath: path.join(root, 'config.json'),
    cleanup: () => fs.rm(root, { recursive: true, force: true }),
  }
}

/** A workshop, its scratch folders, and a js_eval shortcut. */
export interface EvalWorkshop extends AsyncDisposable {
  readonly scratch: Scratch
  readonly workshop: Workshop
  /** Runs `code` with js_eval in the workshop's default session. */
  run(code: string, extra?: Record<string, unknown>): Promise<ToolResult>
}

/** Opens a workshop on `files` with configuration `config`. */
export async function evalWorkshop(
  options: {
    readonly files?: Record<string, string>
    readonly config?: Record<string, unknown>
    readonly workshop?: Partial<WorkshopOptions>
  } = {},
): Promise<EvalWorkshop> {
  const scratch = await makeScratch(options.files ?? {})
  if (options.config !== undefined) {
    await fs.writeFile(scratch.configPath, JSON.stringify(options.config))
  }
  const workshop = await openWorkshop({
    workspace: scratch.workspace,
    stateDir: scratch.stateDir,
    configPath: scratch.configPath,
    ...options.workshop,
  })
  return {
    scratch,
    workshop,
    run: (code, extra = {}) => workshop.call('js_eval', { code, ...extra }),
    [Symbol.asyncDispose]: async () => {
      await workshop.close()
      await scratch.cleanup()
    },
  }
}

/** The content of a success. */
export function evalValue(result: ToolResult): string {
  assert.equal(result.type, 'success', result.content)
  return result.content
}

/** The content of an error with `code`. */
export function evalError(result: ToolResult, code: ErrorCode): string {
  assert.equal(
    result.type === 'error' ? result.code : `success: ${result.content}`,
    code,
    result.content,
  )
  return result.content
}
