import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { configSchema } from '../config/config-file.ts'
import { EitriError } from '../errors/eitri-error.ts'
import { lazyModelCatalog } from '../provider/lazy-model-catalog.ts'
import { configuredRoster } from './configured-roster.ts'
import { DEFAULT_MODEL_POLICY } from './default-roster.ts'

describe('the default roster', () => {
  it('ships coder and reviewer as llm agents when the configuration has no agents', () => {
    const roster = configuredRoster(configSchema.parse({}), 'config.json')
    const coder = roster.lookup('coder')
    const reviewer = roster.lookup('reviewer')
    assert.deepEqual(
      [coder.program.kind, coder.access, coder.tools],
      [
        'llm',
        'workspace-write',
        ['edit_file', 'glob', 'grep', 'js_eval', 'read_file', 'shell', 'write_file'],
      ],
    )
    assert.deepEqual(
      [reviewer.program.kind, reviewer.access, reviewer.tools],
      ['llm', 'read-only', ['glob', 'grep', 'read_file']],
    )
    assert.deepEqual(coder.modelPolicy, DEFAULT_MODEL_POLICY)
  })

  it('lets a configured agent replace a shipped one by id and adds the others beside them', () => {
    const config = configSchema.parse({
      agents: [
        {
          id: 'coder',
          tools: ['read_file'],
          modelPolicy: { provider: 'local', model: 'm' },
          program: { kind: 'llm' },
        },
        { id: 'echo', program: { kind: 'echo' } },
      ],
    })
    const roster = configuredRoster(config, 'config.json')
    assert.deepEqual(
      roster
        .list()
        .map((def) => def.id)
        .sort(),
      ['coder', 'echo', 'reviewer'],
    )
    assert.deepEqual(roster.lookup('coder').modelPolicy, { provider: 'local', model: 'm' })
  })

  it('names a model whose price is known, so its default budget can be kept; a missing key names its variable', () => {
    const facts = lazyModelCatalog({ env: { ANTHROPIC_API_KEY: 'k' } }).describe(
      DEFAULT_MODEL_POLICY,
    )
    assert.ok(facts.price !== undefined && facts.price.input > 0 && facts.price.output > 0)
    assert.ok(facts.contextWindow !== undefined)
    assert.throws(
      () => lazyModelCatalog({ env: {} }).describe(DEFAULT_MODEL_POLICY),
      (error) =>
        EitriError.isInstance(error) &&
        error.code === 'not_available' &&
        /ANTHROPIC_API_KEY is not set/.test(error.message),
    )
  })
})
