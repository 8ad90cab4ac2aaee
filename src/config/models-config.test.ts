import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { configSchema, loadConfig } from './config-file.ts'

async function withConfig(json: unknown, use: (file: string) => Promise<void>): Promise<void> {
  const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-models-config-'))
  const file = path.join(folder, 'config.json')
  await fs.writeFile(file, JSON.stringify(json))
  try {
    await use(file)
  } finally {
    await fs.rm(folder, { recursive: true, force: true })
  }
}

describe('the models configuration', () => {
  it('accepts providers, prices and context windows, and names the bad key and the fix', async () => {
    const good = configSchema.parse({
      providers: {
        local: {
          type: 'openai-compatible',
          baseURL: 'http://127.0.0.1:8080/v1',
          apiKeyEnv: 'LOCAL_KEY',
        },
        proxy: { type: 'anthropic', baseURL: 'https://llm-proxy.example.com/v1' },
      },
      prices: { 'local:stub-1': { input: 1, output: 2, cachedInput: 0.1 } },
      contextWindows: { 'local:stub-1': 32_768 },
    })
    assert.equal(good.providers['local']?.apiKeyEnv, 'LOCAL_KEY')
    assert.deepEqual(configSchema.parse({}).providers, {})
    assert.deepEqual(configSchema.parse({ env: ['AWS_REGION', 'LOCAL'] }).env, [
      'AWS_REGION',
      'LOCAL',
    ])
    const cases: [unknown, RegExp][] = [
      [
        { providers: { local: { type: 'openai-compatible' } } },
        /providers\.local\.baseURL: .*needs a baseURL/,
      ],
      [
        { providers: { local: { type: 'gemini' } } },
        /providers\.local\.type: unknown provider type "gemini": one of openai, anthropic, openai-compatible/,
      ],
      [
        { providers: { Local: { type: 'openai' } } },
        /providers\.Local: a provider name is lower case/,
      ],
      [
        { providers: { p: { type: 'openai', baseURL: 'https://user:pw@x.example/v1' } } },
        /providers\.p\.baseURL: .*without credentials/,
      ],
      // A password with no user name is credentials too (and Node's fetch would echo it back
      // in its refusal, into the Run's error).
      [
        { providers: { p: { type: 'openai', baseURL: 'https://:pw-secret@x.example/v1' } } },
        /providers\.p\.baseURL: .*without credentials/,
      ],
      [
        { providers: { p: { type: 'openai', apiKey: 'sk-1' } } },
        /providers\.p: a key is never written in the configuration file.*apiKeyEnv/,
      ],
      [
        { prices: { 'stub-1': { input: 1, output: 2 } } },
        /prices\.stub-1: a model is named PROVIDER:MODEL/,
      ],
      [{ prices: { 'local:stub-1': { input: -1, output: 2 } } }, /prices\.local:stub-1\.input/],
      [{ contextWindows: { 'local:stub-1': 0 } }, /contextWindows\.local:stub-1/],
      // js_eval's env may not be granted a variable that holds a model key (the grant of any
      // other variable is the control, below).
      [{ env: ['OPENAI_API_KEY'] }, /env\[0\]: OPENAI_API_KEY holds the model key of the openai/],
      [
        {
          env: ['AWS_REGION', 'WORK_KEY'],
          providers: { work: { type: 'openai', apiKeyEnv: 'WORK_KEY' } },
        },
        /env\[1\]: WORK_KEY holds the model key of providers\.work, which never reaches js_eval/,
      ],
    ]
    for (const [json, message] of cases) {
      await withConfig(json, async (file) => {
        await assert.rejects(loadConfig(file), (error: Error & { code?: string }) => {
          assert.equal(error.code, 'config_invalid', JSON.stringify(json))
          assert.match(error.message, /config\.json is invalid/)
          assert.match(error.message, message)
          return true
        })
      })
    }
  })
})
