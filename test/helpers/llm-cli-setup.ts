/**
 * Test support for `eitri` processes running model agents: a configuration that names a fake
 * model API on loopback (see model-wire-server.ts) as the openai-compatible provider `local`,
 * with `stub-1` priced and `free-1` not, and an SQLite store the test can open beside the
 * process.
 */
import fs from 'node:fs/promises'
import path from 'node:path'
import { openStore } from '../../src/store/open-store.ts'
import type { RunRecord } from '../../src/store/run-record.ts'
import type { Scratch } from './scratch.ts'

/** Options of {@link writeModelConfig}. */
export interface ModelConfigOptions {
  /** Each agent's dollar budget. @default 1 */
  readonly budgetDollars?: number
  /** More top-level configuration (`runs`, …), merged over the rest. */
  readonly extra?: Record<string, unknown>
}

/**
 * Writes the scratch area's configuration: provider `local` at `baseURL`, agents `writer`
 * (`local:stub-1`, priced) and `unpriced` (`local:free-1`), each with `write_file` only.
 * Answers the flags for an `eitri` command and the store's URL.
 */
export async function writeModelConfig(
  scratch: Scratch,
  baseURL: string,
  options: ModelConfigOptions = {},
): Promise<{ flags: string[]; url: string }> {
  const agent = (id: string, model: string) => ({
    id,
    prompt: 'You write files when asked.',
    tools: ['write_file'],
    access: 'workspace-write',
    modelPolicy: { provider: 'local', model },
    program: { kind: 'llm', budgetDollars: options.budgetDollars ?? 1 },
  })
  await fs.writeFile(
    scratch.configPath,
    JSON.stringify({
      providers: { local: { type: 'openai-compatible', baseURL } },
      prices: { 'local:stub-1': { input: 1, output: 2 } },
      agents: [agent('writer', 'stub-1'), agent('unpriced', 'free-1')],
      ...options.extra,
    }),
  )
  const url = `sqlite:${path.join(scratch.root, 'runs.sqlite')}`
  return { flags: [...scratch.flags, '--store', url], url }
}

/** The Runs in the store at `url`. */
export async function runsOf(url: string): Promise<RunRecord[]> {
  await using store = await openStore(url)
  return await store.listRuns()
}
