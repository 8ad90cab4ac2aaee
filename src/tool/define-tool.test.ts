import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { z } from 'zod'
import { defineTool } from './define-tool.ts'
import { toolSuccess } from './tool-result.ts'

const execute = async () => toolSuccess('ok')

describe('defineTool', () => {
  it('returns frozen plain data with the input JSON Schema computed once', () => {
    const tool = defineTool({
      name: 'hello',
      description: 'Greets.',
      parameters: z.object({
        who: z.string().describe('Whom to greet.'),
        times: z.number().int().optional(),
      }),
      execute,
    })
    assert.equal(Object.isFrozen(tool), true)
    assert.deepEqual(tool.inputSchema, {
      type: 'object',
      properties: {
        who: { type: 'string', description: 'Whom to greet.' },
        times: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
      },
      required: ['who'],
    })
  })

  for (const name of ['a', 'read_file', 'x'.repeat(64), 'tool_2']) {
    it(`accepts the name ${JSON.stringify(name.length > 20 ? `${name.slice(0, 5)}…(${name.length})` : name)}`, () => {
      assert.equal(
        defineTool({ name, description: 'd', parameters: z.object({}), execute }).name,
        name,
      )
    })
  }

  for (const name of ['', 'Read', '1tool', 'read-file', 'read file', '_x', 'x'.repeat(65), 'é']) {
    it(`refuses the name ${JSON.stringify(name.length > 20 ? `${name.slice(0, 5)}…(${name.length})` : name)}`, () => {
      assert.throws(
        () => defineTool({ name, description: 'd', parameters: z.object({}), execute }),
        /Invalid tool name/,
      )
    })
  }

  it('has no governance unless given one, and freezes the one given', () => {
    const plain = defineTool({ name: 'x', description: 'd', parameters: z.object({}), execute })
    assert.equal('governance' in plain, false)
    const allowPaths = ['/srv/out']
    const governed = defineTool({
      name: 'x',
      description: 'd',
      parameters: z.object({}),
      execute,
      governance: {
        sideEffects: 'write',
        timeoutMs: 1000,
        maxBytes: 10,
        sandbox: { mode: 'tempdir', allowPaths },
      },
    })
    allowPaths.push('/later')
    assert.deepEqual(governed.governance?.sandbox.allowPaths, ['/srv/out'])
    assert.equal(Object.isFrozen(governed.governance), true)
    assert.equal(Object.isFrozen(governed.governance?.sandbox), true)
  })

  it('is read-only only when declared, and refuses read-only with changes', () => {
    const base = { name: 'x', description: 'd', parameters: z.object({}), execute }
    assert.equal('readOnly' in defineTool(base), false)
    assert.equal('readOnly' in defineTool({ ...base, readOnly: false }), false)
    assert.equal(defineTool({ ...base, readOnly: true }).readOnly, true)
    assert.throws(
      () => defineTool({ ...base, readOnly: true, changes: 'current-line' }),
      /readOnly tool changes nothing/,
    )
  })

  it('refuses an empty description', () => {
    assert.throws(
      () => defineTool({ name: 'x', description: '  ', parameters: z.object({}), execute }),
      /needs a description/,
    )
  })

  it('refuses parameters that are not an object schema', () => {
    assert.throws(
      () => defineTool({ name: 'x', description: 'd', parameters: z.string() as never, execute }),
      /must be a zod object schema/,
    )
  })
})
