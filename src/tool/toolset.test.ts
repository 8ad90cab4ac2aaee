import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { z } from 'zod'
import { EitriError } from '../errors/eitri-error.ts'
import { defineTool } from './define-tool.ts'
import { contextWith } from './test-context.ts'
import { ToolRegistry } from './tool-registry.ts'
import { toolSuccess } from './tool-result.ts'
import { CANCELLED_BEFORE_EXECUTION, Toolset } from './toolset.ts'
import { CHARS_PER_TOKEN, MAX_RESULT_TOKENS } from './truncate.ts'

function fixture() {
  const ran: string[] = []
  const echo = defineTool({
    name: 'echo',
    description: 'Echoes text.',
    parameters: z.object({
      text: z.string(),
      nested: z.object({ count: z.number().int() }).optional(),
    }),
    execute: async ({ text }) => {
      ran.push(`echo:${text}`)
      return toolSuccess(text, { length: text.length })
    },
  })
  const secret = defineTool({
    name: 'secret',
    description: 'Not for everyone.',
    parameters: z.object({}),
    execute: async () => {
      ran.push('secret')
      return toolSuccess('secret ran')
    },
  })
  const hang = defineTool({
    name: 'hang',
    description: 'Never finishes on its own and ignores its signal.',
    parameters: z.object({}),
    execute: () => {
      ran.push('hang')
      return new Promise(() => {})
    },
  })
  const crash = defineTool({
    name: 'crash',
    description: 'Throws.',
    parameters: z.object({ kind: z.enum(['plain', 'eitri', 'sync', 'string']) }),
    execute: ({ kind }) => {
      if (kind === 'sync') throw new TypeError('sync boom at /host/secret/root/x.ts')
      return Promise.reject(
        kind === 'eitri'
          ? new EitriError('not_found', 'File not found: a.md', { data: { path: 'a.md' } })
          : kind === 'string'
            ? 'a bare string'
            : new Error('boom in /host/secret/root/deep/file.ts'),
      )
    },
  })
  const big = defineTool({
    name: 'big',
    description: 'Answers a long text.',
    parameters: z.object({}),
    execute: async () => toolSuccess('b'.repeat(100_000)),
  })
  const registry = new ToolRegistry([echo, secret, hang, crash, big])
  return { ran, registry, toolset: new Toolset(registry, ['echo', 'hang', 'crash', 'big']) }
}

describe('Toolset', () => {
  it('offers exactly its tools, with the schema under input_schema and parameters', () => {
    const { toolset } = fixture()
    const offered = toolset.offered()
    assert.deepEqual(
      offered.map((tool) => tool.name),
      ['echo', 'hang', 'crash', 'big'],
    )
    const echo = offered[0]
    assert.ok(echo)
    assert.equal(echo.description, 'Echoes text.')
    assert.equal(echo.input_schema, echo.parameters)
    assert.equal(echo.input_schema['type'], 'object')
    assert.deepEqual(echo.input_schema['required'], ['text'])
  })

  it('offers nothing and runs nothing without names: omitted tools are no tools', async () => {
    const { registry, ran } = fixture()
    const empty = new Toolset(registry)
    assert.deepEqual(empty.offered(), [])
    const result = await empty.run({ name: 'echo', input: { text: 'x' } }, contextWith())
    assert.equal(result.type, 'error')
    assert.match(
      result.content,
      /^Tool not available to this agent: echo\. This agent has no tools\.$/,
    )
    assert.deepEqual(ran, [])
  })

  it('refuses a registered tool outside the set without running it', async () => {
    const { toolset, ran } = fixture()
    const result = await toolset.run({ name: 'secret', input: {} }, contextWith())
    assert.deepEqual(
      [result.type, result.type === 'error' && result.code],
      ['error', 'not_available'],
    )
    assert.match(result.content, /^Tool not available to this agent: secret\./)
    assert.deepEqual(ran, [])
  })

  it('answers an unknown name with Unknown tool and the available names', async () => {
    const { toolset } = fixture()
    const result = await toolset.run({ name: 'nope', input: {} }, contextWith())
    assert.equal(result.type === 'error' && result.code, 'unknown_tool')
    assert.equal(result.content, 'Unknown tool: nope. Available tools: echo, hang, crash, big.')
  })

  it('quotes a huge name or field of the call as a bounded prefix, and keeps every refusal in budget', async () => {
    const { toolset, ran } = fixture()
    const huge = 'x'.repeat(10_000_000)
    const unknown = await toolset.run({ name: huge, input: {} }, contextWith())
    assert.equal(unknown.type === 'error' && unknown.code, 'unknown_tool')
    assert.equal(
      unknown.content,
      `Unknown tool: ${'x'.repeat(200)}… (10000000 characters in all). Available tools: echo, hang, crash, big.`,
    )
    const field = await toolset.run({ name: 'echo', input: { [huge]: 1 } }, contextWith())
    assert.equal(field.type === 'error' && field.code, 'invalid_input')
    assert.ok(field.content.length < 1_000, `${field.content.length} characters`)
    assert.match(
      field.content,
      /^- x{200}… \(10000000 characters in all\): not a field of this tool;/m,
    )
    // Many short unknown fields: the refusal is cut to the result budget like any result.
    const many = Object.fromEntries(Array.from({ length: 100_000 }, (_, index) => [`k${index}`, 1]))
    const fields = await toolset.run({ name: 'echo', input: many }, contextWith())
    assert.equal(fields.type === 'error' && fields.code, 'invalid_input')
    assert.ok(fields.content.length <= MAX_RESULT_TOKENS * CHARS_PER_TOKEN)
    assert.equal(fields.metadata['truncated'], true)
    assert.deepEqual(ran, [])
  })

  it('names among the available tools only those offered where the call runs', async () => {
    const tool = (name: string, unavailable?: string) =>
      defineTool({
        name,
        description: name,
        parameters: z.object({}),
        ...(unavailable === undefined ? {} : { availability: async () => unavailable }),
        execute: async () => toolSuccess(name),
      })
    const registry = new ToolRegistry([tool('read'), tool('budget', 'only in a model Run')])
    const toolset = new Toolset(registry, ['read', 'budget'])
    const result = await toolset.run({ name: 'nope', input: {} }, contextWith())
    assert.equal(result.content, 'Unknown tool: nope. Available tools: read.')
  })

  it('refuses unknown names at construction and never widens when narrowed', () => {
    const { registry, toolset } = fixture()
    assert.throws(
      () => new Toolset(registry, ['echo', 'ghost']),
      (error: unknown) => EitriError.isInstance(error) && error.code === 'unknown_tool',
    )
    assert.deepEqual(toolset.narrow(['echo']).names(), ['echo'])
    assert.throws(
      () => toolset.narrow(['secret']),
      (error: unknown) => EitriError.isInstance(error) && error.code === 'not_available',
    )
  })

  it('validates input before execute and names each field path', async () => {
    const { toolset, ran } = fixture()
    const result = await toolset.run(
      { name: 'echo', input: { text: 7, nested: { count: 1.5 } } },
      contextWith(),
    )
    assert.equal(result.type === 'error' && result.code, 'invalid_input')
    assert.match(result.content, /- text: .*expected string, received number/)
    assert.match(result.content, /- nested\.count: .*expected int/)
    assert.deepEqual(ran, [])
  })

  it('says a missing field is missing, and names a field the tool does not have with those it has', async () => {
    const { toolset, ran } = fixture()
    const result = await toolset.run({ name: 'echo', input: { txt: 'hi' } }, contextWith())
    assert.equal(result.type === 'error' && result.code, 'invalid_input')
    assert.match(result.content, /^- text: missing; it is required \(string\)$/m)
    assert.match(
      result.content,
      /^- txt: not a field of this tool; its fields: text, nested\? \(\? optional\)$/m,
    )
    assert.deepEqual(ran, [])
    // A call that parses ignores a field it does not know, as before.
    const extra = await toolset.run({ name: 'echo', input: { text: 'hi', more: 1 } }, contextWith())
    assert.equal(extra.type, 'success')
  })

  it('treats a missing or non-object input as invalid, not as a crash', async () => {
    const { toolset } = fixture()
    const missing = await toolset.run({ name: 'echo', input: undefined }, contextWith())
    assert.match(missing.content, /- text: /)
    const wrong = await toolset.run({ name: 'echo', input: 'text' }, contextWith())
    assert.equal(wrong.type === 'error' && wrong.code, 'invalid_input')
    assert.match(wrong.content, /- \(input\): .*expected object/)
  })

  it('runs a valid call and returns its result', async () => {
    const { toolset } = fixture()
    assert.deepEqual(await toolset.run({ name: 'echo', input: { text: 'hi' } }, contextWith()), {
      type: 'success',
      content: 'hi',
      metadata: { length: 2 },
    })
  })

  it('turns an unexpected throw into tool_failed without a stack trace or host path', async () => {
    const { toolset } = fixture()
    for (const kind of ['plain', 'sync', 'string']) {
      const result = await toolset.run({ name: 'crash', input: { kind } }, contextWith())
      assert.equal(result.type === 'error' && result.code, 'tool_failed', kind)
      assert.doesNotMatch(result.content, /\n\s+at /, 'no stack frames')
      assert.doesNotMatch(result.content, /\/host\/secret\/root/, 'no host path')
    }
  })

  it('turns a thrown EitriError into an error result with its code, message and data', async () => {
    const { toolset } = fixture()
    const result = await toolset.run({ name: 'crash', input: { kind: 'eitri' } }, contextWith())
    assert.deepEqual(result, {
      type: 'error',
      code: 'not_found',
      content: 'File not found: a.md',
      metadata: { tool: 'crash', path: 'a.md' },
    })
  })

  it('truncates oversized content', async () => {
    const { toolset } = fixture()
    const result = await toolset.run({ name: 'big', input: {} }, contextWith())
    assert.equal(result.metadata['truncated'], true)
    assert.match(result.content, /OUTPUT TRUNCATED/)
  })

  it('ends a call in flight as cancelled as soon as the signal aborts, even if the tool ignores it', async () => {
    const { toolset } = fixture()
    const controller = new AbortController()
    const pending = toolset.run({ name: 'hang', input: {} }, contextWith(controller.signal))
    setImmediate(() => controller.abort())
    const result = await pending
    assert.equal(result.type === 'error' && result.code, 'cancelled')
  })

  it('runs a batch in order and answers every call after a cancel with [cancelled before execution]', async () => {
    const { toolset, ran } = fixture()
    const controller = new AbortController()
    const batch = toolset.runBatch(
      [
        { name: 'echo', input: { text: 'one' } },
        { name: 'hang', input: {} },
        { name: 'echo', input: { text: 'three' } },
        { name: 'secret', input: {} },
      ],
      contextWith(controller.signal),
    )
    setTimeout(() => controller.abort(), 20)
    const results = await batch
    assert.deepEqual(ran, ['echo:one', 'hang'])
    assert.deepEqual(
      results.map((result) => [
        result.type,
        result.type === 'error' ? result.code : '',
        result.content,
      ]),
      [
        ['success', '', 'one'],
        ['error', 'cancelled', 'Tool call cancelled: "hang" was stopped before it finished.'],
        ['error', 'cancelled', CANCELLED_BEFORE_EXECUTION],
        ['error', 'cancelled', CANCELLED_BEFORE_EXECUTION],
      ],
    )
  })
})
