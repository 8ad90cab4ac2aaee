import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { evalError, evalValue, evalWorkshop } from './test-eval-workshop.ts'

describe('the tools capability', () => {
  it('runs tools through the whole contract and orchestrates many calls in one eval', async () => {
    await using fixture = await evalWorkshop({ files: { 'a.md': 'one\n', 'b.md': 'two\n' } })
    const code = `
      const paths = (await tools.call('glob', { pattern: '*.md' })).content.split('\\n')
      const texts = await Promise.all(paths.map((path) => tools.call('read_file', { path })))
      texts.map((result) => result.content.trim()).join('+')`
    const result = await fixture.run(code)
    assert.equal(evalValue(result), 'one+two')
    assert.equal(result.metadata['toolCalls'], 3)
    const invalid = await fixture.run("await tools.call('read_file', { path: 7 })")
    assert.match(evalValue(invalid), /code: "invalid_input"/)
    const refused = await fixture.run(
      "(await tools.call('read_file', { path: '../outside' })).code",
    )
    assert.equal(evalValue(refused), 'path_outside_workspace')
    assert.match(
      evalValue(await fixture.run("(await tools.call('format_disk', {})).content")),
      /^Unknown tool: format_disk/,
    )
  })

  it('lists the tools it may call, never js_eval, and refuses to call js_eval', async () => {
    await using fixture = await evalWorkshop()
    const names = evalValue(
      await fixture.run('(await tools.list()).map((tool) => tool.name).join()'),
    )
    assert.match(names, /read_file/)
    assert.doesNotMatch(names, /js_eval/)
    assert.match(
      evalError(await fixture.run("await tools.call('js_eval', { code: '1' })"), 'eval_error'),
      /\[not_available\]/,
    )
  })

  it('offers only the toolset of the session', async () => {
    await using fixture = await evalWorkshop({ workshop: { tools: ['js_eval', 'glob'] } })
    assert.match(
      evalValue(
        await fixture.run("(await tools.call('write_file', { path: 'x', content: 'y' })).content"),
      ),
      /^Tool not available to this agent: write_file/,
    )
  })

  it('stops an eval at its tool-call budget', async () => {
    await using fixture = await evalWorkshop({ workshop: { evaluation: { toolCallBudget: 3 } } })
    const content = evalError(
      await fixture.run("for (let i = 0; i < 5; i++) await tools.call('glob', { pattern: '*' })"),
      'eval_error',
    )
    assert.match(content, /\[limit_exceeded\].*3 tool calls/)
    assert.equal(
      evalValue(await fixture.run("(await tools.call('glob', { pattern: '*' })).type")),
      'success',
    )
  })
})
