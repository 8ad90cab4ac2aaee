/**
 * `confine` end to end with its default executor: real child processes, real files.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { z } from 'zod'
import { runToolCall } from '../tool/run-tool-call.ts'
import { contextWith } from '../tool/test-context.ts'
import { confine } from './confine.ts'
import { FIXTURES, sha256 } from './executors/executor-contract.ts'
import { shout } from './fixtures/confined-functions.ts'
import type { SandboxMetadata } from './sandbox-answer.ts'

const note = z.object({ name: z.string(), content: z.string() })

describe('confine with the process executor', () => {
  it('runs a module export in a child process and answers its result', async () => {
    const tool = confine(
      { module: FIXTURES, export: 'printAndAnswer' },
      {
        name: 'answer',
        description: 'Answers.',
        parameters: z.object({ printed: z.string(), answer: z.unknown() }),
      },
    )
    const result = await runToolCall(tool, { printed: 'noise', answer: [1] }, contextWith())
    assert.equal(result.content, '[1]')
    const printed = await runToolCall(tool, { printed: 'only this', answer: null }, contextWith())
    assert.equal(printed.content, 'only this', 'an empty result falls back to what it printed')
  })

  it('finds writes itself: allowed and hashed in tempdir mode, a violation in read-only mode', async () => {
    const definition = { name: 'write_note', description: 'Writes a note.', parameters: note }
    const target = { module: FIXTURES, export: 'writeNote' }
    const input = { name: 'note.txt', content: 'hello' }
    const tempdir = confine(target, { ...definition, mode: 'tempdir' })
    const allowed = await runToolCall(tempdir, input, contextWith())
    assert.equal(allowed.type, 'success', allowed.content)
    assert.deepEqual((allowed.metadata['sandbox'] as SandboxMetadata).outputHashes, {
      'note.txt': sha256('hello'),
    })
    const readOnly = confine(target, definition)
    const refused = await runToolCall(readOnly, input, contextWith())
    assert.equal(refused.type === 'error' && refused.code, 'sandbox_violation')
    assert.deepEqual((refused.metadata['sandbox'] as SandboxMetadata).violations, ['note.txt'])
  })

  it('reports the timeout of a spinning child with the exact message', async () => {
    const tool = confine(
      { module: FIXTURES, export: 'spin' },
      { name: 'spin', description: 'Spins.', parameters: z.object({}), timeoutMs: 400 },
    )
    const result = await runToolCall(tool, {}, contextWith())
    assert.equal(result.type === 'error' && result.code, 'timeout')
    assert.equal(result.content, "TIMEOUT: tool 'spin' exceeded the 0.4 s sandbox limit.")
  })

  it('re-confines an ordinary tool out of process from where its module exports it', async () => {
    const tool = confine(shout, { source: { module: FIXTURES, export: 'shout' } })
    assert.equal(tool.name, 'shout')
    const result = await runToolCall(tool, { text: 'hey' }, contextWith())
    assert.equal(result.content, 'HEY!')
  })

  it("passes the parent's environment only when asked to, unsafely", async () => {
    const definition = { name: 'environment', description: 'Env.', parameters: z.object({}) }
    const target = { module: FIXTURES, export: 'environment' }
    const inherited = confine(target, {
      ...definition,
      env: 'inherit',
      inheritedEnvironment: { EITRI_TEST_SECRET: 'given' },
    })
    const result = await runToolCall(inherited, {}, contextWith())
    assert.equal((JSON.parse(result.content) as { secret: string }).secret, 'given')
  })
})
