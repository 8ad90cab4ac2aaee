import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { createWorkspaceView } from '../../access/confined-workspace.ts'
import { ToolRegistry } from '../../tool/tool-registry.ts'
import { Toolset } from '../../tool/toolset.ts'
import { fileTools } from '../../tools/files/index.ts'
import type { RunTools } from '../run-tools.ts'
import {
  answers,
  callsTool,
  fixedCatalog,
  llmFixture,
  llmTeam,
  scriptedModel,
} from './test-llm-fixture.ts'

describe('an llm Run over real tools', () => {
  it('writes through the toolset into its own world, kept for review, never into main', async (t) => {
    const toolset = new Toolset(new ToolRegistry(fileTools), ['read_file', 'write_file'])
    const model = scriptedModel([
      () => callsTool([{ name: 'write_file', input: { path: 'notes.md', content: 'hello\n' } }]),
      // A tool the Run was not given is refused through the contract, not run.
      () => callsTool([{ name: 'grep', input: { pattern: 'x' } }]),
      () => answers('Wrote notes.md.'),
    ])
    const { runtime, workspace } = await llmFixture(t, fixedCatalog(model), (context) => {
      const ctx = async (signal: AbortSignal) => ({
        signal,
        workspace: createWorkspaceView({ tree: await context.tree() }),
      })
      return {
        offered: async () => toolset.offeredIn(await ctx(context.signal)),
        call: async (call, { signal }) => toolset.run(call, await ctx(signal)),
      } satisfies RunTools
    })
    const team = llmTeam('writer')
    const handle = await runtime.hire(team, 'writer', { task: 'write notes.md' })
    const result = await handle.result()
    assert.equal(result.status, 'completed')
    // Changes bound for main wait for a person: nobody approves in this runtime.
    assert.equal(result.settlementStatus, 'review')
    await assert.rejects(fs.readFile(path.join(workspace, 'notes.md')), { code: 'ENOENT' })
    const [first, second, third] = model.doGenerateCalls
    assert.match(JSON.stringify(second?.prompt.at(-1)), /Wrote 6 bytes to notes.md/)
    assert.deepEqual(first?.tools?.map((tool) => tool.name).sort(), ['read_file', 'write_file'])
    const refusal = JSON.stringify(third?.prompt.at(-1))
    assert.match(refusal, /error-text/)
    assert.match(refusal, /grep/)
  })
})
