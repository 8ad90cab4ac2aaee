import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { evalError, evalValue, evalWorkshop } from './test-eval-workshop.ts'

const variables: Record<string, string> = {
  GRANTED: 'granted value',
  API_TOKEN: 's3cr3t-t0ken',
  PATH: '/usr/bin',
}

describe('the env and sandbox capabilities', () => {
  it('answers granted names only, and a secret as its placeholder, never its value', async () => {
    await using fixture = await evalWorkshop({
      config: {
        env: ['GRANTED', 'UNSET'],
        secrets: { API_TOKEN: { domain: 'api.example.com', header: 'Authorization' } },
      },
      workshop: { evaluation: { readVariable: (name) => variables[name] } },
    })
    assert.equal(evalValue(await fixture.run("await env.get('GRANTED')")), 'granted value')
    assert.equal(evalValue(await fixture.run("await env.get('UNSET')")), 'null')
    assert.equal(evalValue(await fixture.run("await env.get('API_TOKEN')")), '${secret:API_TOKEN}')
    for (const name of ['PATH', 'HOME', 'EITRI_TOKEN']) {
      assert.match(
        evalError(await fixture.run(`await env.get('${name}')`), 'eval_error'),
        /\[permission_denied\].*not granted/,
      )
    }
    assert.equal(
      evalValue(await fixture.run('JSON.stringify(await env.list())')),
      '{"granted":["GRANTED","UNSET"],"secrets":["API_TOKEN"]}',
    )
  })

  it('describes every capability and each in detail', async () => {
    await using fixture = await evalWorkshop()
    const overview = JSON.parse(
      evalValue(await fixture.run('JSON.stringify(await sandbox.overview())')),
    ) as {
      name: string
      purpose: string
      example: string
      functions: string[]
    }[]
    // Later capabilities join the list; sandbox describes them all, last.
    const names = overview.map((entry) => entry.name)
    assert.deepEqual(
      names.filter((name) => ['fs', 'tools', 'shell', 'http', 'env', 'sandbox'].includes(name)),
      ['fs', 'tools', 'shell', 'http', 'env', 'sandbox'],
    )
    assert.equal(names.at(-1), 'sandbox')
    for (const entry of overview) {
      assert.ok(
        entry.purpose.length > 10 && entry.example.length > 5 && entry.functions.length > 0,
        entry.name,
      )
    }
    const doc = evalValue(await fixture.run("JSON.stringify(await sandbox.doc('fs'))"))
    assert.match(doc, /readFile\(path: string/)
    assert.match(
      evalError(await fixture.run("await sandbox.doc('nope')"), 'eval_error'),
      /no capability is named nope/i,
    )
  })

  it('checks arguments on the host and names the one that is wrong', async () => {
    await using fixture = await evalWorkshop()
    const content = evalError(await fixture.run('await fs.readFile(42)'), 'eval_error')
    assert.match(content, /\[invalid_input\].*argument 1/s)
  })
})
