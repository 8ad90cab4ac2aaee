import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { evalError, evalValue, evalWorkshop } from './test-eval-workshop.ts'

// Values a model key could have; each only in the variables named below.
const OPENAI_KEY = 'sk-openai-0123456789abcdef'
const WORK_KEY = 'wk-work-provider-fedcba9876'
const NOT_A_KEY = 'plain-value-of-no-key-42'

const variables: Record<string, string> = {
  OPENAI_API_KEY: OPENAI_KEY,
  WORK_KEY,
  // The attack: each key copied into a name the configuration may grant.
  COPY_OF_OPENAI: OPENAI_KEY,
  COPY_OF_WORK: `Bearer ${WORK_KEY}`,
  // The control: a granted variable holding no key's value.
  HARMLESS: NOT_A_KEY,
}

const config = {
  env: ['COPY_OF_OPENAI', 'COPY_OF_WORK', 'HARMLESS'],
  providers: {
    work: { type: 'openai-compatible', baseURL: 'http://127.0.0.1:1/v1', apiKeyEnv: 'WORK_KEY' },
  },
}

describe('model keys in js_eval', () => {
  it('masks a model key copied into a granted variable, a file or an error; a harmless value passes', async () => {
    await using fixture = await evalWorkshop({
      config,
      files: { 'notes.txt': `the key is ${OPENAI_KEY}\n` },
      workshop: { evaluation: { readVariable: (name) => variables[name] } },
    })
    // Positive control: a granted value comes back as it is, so masking is what hides a key.
    assert.equal(evalValue(await fixture.run("await env.get('HARMLESS')")), NOT_A_KEY)
    assert.equal(
      evalValue(await fixture.run("await env.get('COPY_OF_OPENAI')")),
      '${model-key:OPENAI_API_KEY}',
    )
    assert.equal(
      evalValue(await fixture.run("await env.get('COPY_OF_WORK')")),
      'Bearer ${model-key:WORK_KEY}',
    )
    // A key read from a file, spelled out by the code, or in an error and its stack.
    const fromFile = evalValue(await fixture.run("await fs.readFile('notes.txt')"))
    assert.ok(!fromFile.includes(OPENAI_KEY), fromFile)
    assert.match(fromFile, /\$\{model-key:OPENAI_API_KEY\}/)
    const spelled = evalValue(await fixture.run(`console.log(${JSON.stringify(WORK_KEY)}); 1`))
    assert.ok(!spelled.includes(WORK_KEY), spelled)
    const thrown = evalError(
      await fixture.run(`throw new Error('key ' + ${JSON.stringify(OPENAI_KEY)})`),
      'eval_error',
    )
    assert.ok(!thrown.includes(OPENAI_KEY), thrown)
    // An encoded form (hex) is masked too.
    const hex = Buffer.from(OPENAI_KEY).toString('hex')
    const encoded = evalValue(
      await fixture.run(
        `Array.from(${JSON.stringify(OPENAI_KEY)}, (c) => c.charCodeAt(0).toString(16).padStart(2, '0')).join('')`,
      ),
    )
    assert.ok(!encoded.includes(hex), encoded)
    // The key variables themselves are never granted.
    assert.match(
      evalError(await fixture.run("await env.get('OPENAI_API_KEY')"), 'eval_error'),
      /not granted/,
    )
  })

  it('never hands a model key to a jailed command', async () => {
    const saved = process.env['OPENAI_API_KEY']
    process.env['OPENAI_API_KEY'] = OPENAI_KEY
    try {
      await using fixture = await evalWorkshop({
        config,
        workshop: { evaluation: { readVariable: (name) => variables[name] } },
      })
      const availability = await fixture.workshop.jail.availability()
      assert.ok(availability.available, 'install bubblewrap (apt-get install bubblewrap)')
      const env = JSON.parse(
        evalValue(await fixture.run("JSON.stringify((await shell.run('env')).stdout)")),
      ) as string
      // Control: the command ran and printed its environment.
      assert.match(env, /^PATH=/m)
      assert.doesNotMatch(env, /OPENAI_API_KEY|model-key/)
      assert.ok(!env.includes(OPENAI_KEY))
    } finally {
      if (saved === undefined) delete process.env['OPENAI_API_KEY']
      else process.env['OPENAI_API_KEY'] = saved
    }
  })
})
