import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { loadConfig } from './config-file.ts'
import { environmentValue } from './environment.ts'

async function configFrom(json: unknown) {
  const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-eval-config-'))
  const file = path.join(folder, 'config.json')
  await fs.writeFile(file, JSON.stringify(json))
  try {
    return await loadConfig(file)
  } finally {
    await fs.rm(folder, { recursive: true, force: true })
  }
}

describe('the code sandbox configuration', () => {
  it('defaults to an empty allowlist, no granted names and no secrets', async () => {
    const config = await configFrom({})
    assert.deepEqual(config.http, {
      allow: [],
      maxResponseBytes: 5 * 1024 * 1024,
      timeoutMs: 30_000,
    })
    assert.deepEqual(config.env, [])
    assert.deepEqual(config.secrets, {})
  })

  it('takes hosts, names and secret bindings, in lower case', async () => {
    const config = await configFrom({
      http: { allow: ['API.GitHub.com', '*.example.org'] },
      env: ['LANG'],
      secrets: { GITHUB_TOKEN: { domain: 'api.github.com', header: 'Authorization' } },
    })
    assert.deepEqual(config.http.allow, ['api.github.com', '*.example.org'])
    assert.deepEqual(config.secrets, {
      GITHUB_TOKEN: { domain: 'api.github.com', header: 'authorization' },
    })
  })

  it('refuses a wrong section naming the field, and unknown keys', async () => {
    const cases: [unknown, RegExp][] = [
      [{ http: { allow: ['https://api.github.com'] } }, /http\.allow\[0\]: a host name/],
      [{ http: { allowed: [] } }, /http: .*allowed/i],
      [{ env: ['NOT-A-NAME'] }, /env\[0\]: an environment variable name/],
      [
        { secrets: { T: { domain: '*.github.com', header: 'authorization' } } },
        /secrets\.T\.domain: a secret is bound to one exact host/,
      ],
      [{ secrets: { T: { domain: 'api.github.com' } } }, /secrets\.T\.header/],
      [{ http: { allow: [], testOnlyAllowLoopback: true } }, /testOnlyAllowLoopback/],
    ]
    for (const [json, message] of cases) {
      await assert.rejects(
        configFrom(json),
        (error: Error) => message.test(error.message),
        JSON.stringify(json),
      )
    }
  })

  it('reads a variable of the environment given, and nothing inherited from Object.prototype', () => {
    assert.equal(environmentValue('TOKEN', { TOKEN: 'v' }), 'v')
    assert.equal(environmentValue('toString', {}), undefined)
  })
})
