/**
 * A scratch area for one test: a workspace folder, a state folder and a config path, all
 * under one temporary folder that `cleanup` removes.
 */
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

export interface Scratch extends AsyncDisposable {
  readonly root: string
  readonly workspace: string
  readonly stateDir: string
  readonly configPath: string
  /** The flags that point an eitri command at this scratch area. */
  readonly flags: string[]
  /** What points `openWorkshop` at this scratch area (spread it, then add the test's own). */
  readonly workshopOptions: {
    readonly workspace: string
    readonly stateDir: string
    readonly configPath: string
  }
  cleanup(): Promise<void>
}

export async function makeScratch(files: Record<string, string> = {}): Promise<Scratch> {
  const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-test-')))
  const workspace = path.join(root, 'workspace')
  const stateDir = path.join(root, 'state')
  const configPath = path.join(root, 'config.json')
  await fs.mkdir(workspace)
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(workspace, name)), { recursive: true })
    await fs.writeFile(path.join(workspace, name), content)
  }
  const cleanup = () => fs.rm(root, { recursive: true, force: true })
  return {
    root,
    workspace,
    stateDir,
    configPath,
    flags: ['--workspace', workspace, '--state-dir', stateDir, '--config', configPath],
    workshopOptions: { workspace, stateDir, configPath },
    cleanup,
    [Symbol.asyncDispose]: cleanup,
  }
}
