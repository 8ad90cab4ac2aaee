import assert from 'node:assert/strict'
import util from 'node:util'
import { describe, it } from 'node:test'
import { configSchema } from '../config/config-file.ts'
import { EitriError } from '../errors/eitri-error.ts'
import { createModelCatalog } from './create-model-catalog.ts'

const KEY = 'sk-test-5a1e0c2d-never-shown'

function rejection(run: () => unknown): EitriError {
  try {
    run()
  } catch (error) {
    assert.ok(EitriError.isInstance(error), `expected an EitriError, got ${String(error)}`)
    return error
  }
  assert.fail('expected resolve to throw')
}

describe('createModelCatalog', () => {
  it('resolves the built-in providers with no configuration, keys from OPENAI_API_KEY and ANTHROPIC_API_KEY', () => {
    const catalog = createModelCatalog({ env: { OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: KEY } })
    const openai = catalog.resolve({ provider: 'openai', model: 'gpt-4o-mini' })
    assert.equal(openai.ref, 'openai:gpt-4o-mini')
    assert.equal(openai.model.modelId, 'gpt-4o-mini')
    // Chat completions, as the decision record says: the provider id names the API.
    assert.equal(openai.model.provider, 'openai.chat')
    const anthropic = catalog.resolve({ provider: 'anthropic', model: 'claude-sonnet-4-20250514' })
    assert.equal(anthropic.ref, 'anthropic:claude-sonnet-4-20250514')
    assert.equal(anthropic.model.modelId, 'claude-sonnet-4-20250514')
  })

  it('takes prices and context windows from the built-in table for models it knows', () => {
    const catalog = createModelCatalog({ env: { OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: KEY } })
    const openai = catalog.resolve({ provider: 'openai', model: 'gpt-4o-mini' })
    assert.deepEqual(openai.price, { input: 0.15, output: 0.6, cachedInput: 0.08 })
    assert.equal(openai.contextWindow, 128_000)
    const anthropic = catalog.resolve({ provider: 'anthropic', model: 'claude-sonnet-4-20250514' })
    assert.deepEqual(anthropic.price, { input: 3, output: 15, cachedInput: 0.3 })
    assert.equal(anthropic.contextWindow, 200_000)
  })

  it('leaves the price and the context window undefined for a model nobody knows, never guessed', () => {
    const catalog = createModelCatalog({
      providers: { local: { type: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1' } },
      env: { OPENAI_API_KEY: KEY },
    })
    const unknown = catalog.resolve({ provider: 'openai', model: 'gpt-from-the-future' })
    assert.equal(unknown.price, undefined)
    assert.equal(unknown.contextWindow, undefined)
    // An OpenAI-compatible server's models are its own, even one named like an OpenAI model.
    const local = catalog.resolve({ provider: 'local', model: 'gpt-4o-mini' })
    assert.equal(local.price, undefined)
    assert.equal(local.contextWindow, undefined)
  })

  it('lets the configuration set and override prices and context windows', () => {
    const config = configSchema.parse({
      providers: { local: { type: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1' } },
      prices: {
        'local:stub-1': { input: 1, output: 2, cachedInput: 0.1 },
        'openai:gpt-4o-mini': { input: 5, output: 6 },
      },
      contextWindows: { 'local:stub-1': 32_768, 'openai:gpt-4o-mini': 4_096 },
    })
    const catalog = createModelCatalog({ ...config, env: { OPENAI_API_KEY: KEY } })
    const local = catalog.resolve({ provider: 'local', model: 'stub-1' })
    assert.deepEqual(local.price, { input: 1, output: 2, cachedInput: 0.1 })
    assert.equal(local.contextWindow, 32_768)
    const openai = catalog.resolve({ provider: 'openai', model: 'gpt-4o-mini' })
    assert.deepEqual(openai.price, { input: 5, output: 6 })
    assert.equal(openai.contextWindow, 4_096)
  })

  it('names the variable to set when a key is missing, and never a value', () => {
    const catalog = createModelCatalog({
      providers: {
        local: {
          type: 'openai-compatible',
          baseURL: 'http://127.0.0.1:9/v1',
          apiKeyEnv: 'LOCAL_KEY',
        },
      },
      env: { ANTHROPIC_API_KEY: '  ', UNRELATED: KEY },
    })
    const openai = rejection(() => catalog.resolve({ provider: 'openai', model: 'gpt-4o-mini' }))
    assert.equal(openai.code, 'not_available')
    assert.match(openai.message, /OPENAI_API_KEY is not set/)
    assert.match(openai.message, /apiKeyEnv/)
    const blank = rejection(() => catalog.resolve({ provider: 'anthropic', model: 'claude' }))
    assert.equal(blank.code, 'not_available')
    assert.match(blank.message, /ANTHROPIC_API_KEY/)
    const local = rejection(() => catalog.resolve({ provider: 'local', model: 'stub-1' }))
    assert.equal(local.code, 'not_available')
    assert.match(local.message, /set LOCAL_KEY/)
    for (const error of [openai, blank, local]) {
      assert.doesNotMatch(util.inspect(error, { depth: 8 }), new RegExp(KEY))
    }
  })

  it('sends no key to an openai-compatible provider that names none', () => {
    const catalog = createModelCatalog({
      providers: { local: { type: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1' } },
      env: {},
    })
    assert.equal(catalog.resolve({ provider: 'local', model: 'stub-1' }).ref, 'local:stub-1')
  })

  it('refuses an unknown provider naming the configured and built-in ones', () => {
    const catalog = createModelCatalog({
      providers: { local: { type: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1' } },
      env: {},
    })
    const error = rejection(() => catalog.resolve({ provider: 'gemini', model: 'g-1' }))
    assert.equal(error.code, 'config_invalid')
    assert.match(error.message, /Unknown model provider "gemini"/)
    assert.match(error.message, /Configured providers: local; built in: openai, anthropic/)
    assert.match(error.message, /"providers"/)
    // Inherited names are not providers.
    const inherited = rejection(() => catalog.resolve({ provider: 'constructor', model: 'x' }))
    assert.equal(inherited.code, 'config_invalid')
    const empty = rejection(() => catalog.resolve({ provider: 'local', model: ' ' }))
    assert.equal(empty.code, 'config_invalid')
    assert.match(empty.message, /modelPolicy\.model is empty/)
  })

  it('reads the environment only when a model is resolved, and only its own variable', () => {
    const reads: string[] = []
    const values: Record<string, string> = { OPENAI_API_KEY: KEY, OTHER_SECRET: 'x' }
    const env = new Proxy(values, {
      get(target, name, receiver): unknown {
        if (typeof name === 'string') reads.push(name)
        return Reflect.get(target, name, receiver)
      },
      getOwnPropertyDescriptor(target, name) {
        if (typeof name === 'string') reads.push(name)
        return Reflect.getOwnPropertyDescriptor(target, name)
      },
    })
    const catalog = createModelCatalog({ env })
    assert.deepEqual(reads, [])
    catalog.resolve({ provider: 'openai', model: 'gpt-4o-mini' })
    assert.ok(reads.length > 0)
    assert.deepEqual([...new Set(reads)], ['OPENAI_API_KEY'])
  })

  it('returns nothing that shows the key, however deeply inspected', () => {
    const catalog = createModelCatalog({ env: { OPENAI_API_KEY: KEY } })
    const resolved = catalog.resolve({ provider: 'openai', model: 'gpt-4o-mini' })
    const shown = util.inspect(resolved, { depth: Infinity, showHidden: true, getters: true })
    // The control: the inspection does reach into the model (its id is in it).
    assert.match(shown, /gpt-4o-mini/)
    assert.doesNotMatch(shown, new RegExp(KEY))
    assert.doesNotMatch(JSON.stringify(resolved), new RegExp(KEY))
  })

  it("uses the vendor's own URL when none is configured, whatever OPENAI_BASE_URL says", () => {
    const previous = process.env['OPENAI_BASE_URL']
    process.env['OPENAI_BASE_URL'] = 'http://attacker.invalid/v1'
    try {
      const catalog = createModelCatalog({ env: { OPENAI_API_KEY: KEY } })
      const { model } = catalog.resolve({ provider: 'openai', model: 'gpt-4o-mini' })
      const config = (model as unknown as { config?: { url?: (o: { path: string }) => string } })
        .config
      assert.equal(
        typeof config?.url,
        'function',
        "the adapter's URL builder moved: update this test",
      )
      assert.equal(
        config?.url?.({ path: '/chat/completions' }),
        'https://api.openai.com/v1/chat/completions',
      )
    } finally {
      if (previous === undefined) delete process.env['OPENAI_BASE_URL']
      else process.env['OPENAI_BASE_URL'] = previous
    }
  })
})
