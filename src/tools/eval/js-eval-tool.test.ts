import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { evalError, evalValue, evalWorkshop } from '../../eval/capabilities/test-eval-workshop.ts'
import { contextWith } from '../../tool/test-context.ts'
import { jsEvalTool } from './js-eval-tool.ts'
import { runToolCall } from '../../tool/run-tool-call.ts'

describe('js_eval', () => {
  it('shows console output, then the value, with the session in the metadata', async () => {
    await using fixture = await evalWorkshop()
    const result = await fixture.run('console.log("working…"); ({ done: true })')
    assert.equal(evalValue(result), 'working…\n{ done: true }')
    assert.equal(result.metadata['session'], 'default')
    assert.equal(result.metadata['valueType'], 'object')
  })

  it('answers a guest exception with its output, message and guest frames', async () => {
    await using fixture = await evalWorkshop()
    const content = evalError(await fixture.run('console.log("before")\nnull.field'), 'eval_error')
    assert.equal(
      content,
      "before\nTypeError: Cannot read properties of null (reading 'field')\n    at <eval>:2:6",
    )
  })

  it('says where to find a namespace’s functions when code calls one it lacks (fs.readdir)', async () => {
    await using fixture = await evalWorkshop()
    const content = evalError(await fixture.run('await fs.readdir("src")'), 'eval_error')
    assert.match(
      content,
      /^TypeError: fs\.readdir is not a function \(fs is eitri's namespace, not Node's module, and has no readdir: `await sandbox\.doc\('fs'\)` lists its functions\)/,
    )
    const listed = evalValue(
      await fixture.run("(await sandbox.doc('fs')).functions.map((f) => f.signature).join(' ')"),
    )
    assert.match(listed, /list\(/)
  })

  it('keeps named sessions apart and each connection to its own', async () => {
    await using fixture = await evalWorkshop()
    await fixture.run('const where = "default"')
    await fixture.run('const where = "scratchpad"', { session: 'scratchpad' })
    assert.equal(evalValue(await fixture.run('where')), 'default')
    assert.equal(evalValue(await fixture.run('where', { session: 'scratchpad' })), 'scratchpad')
    await using connection = await fixture.workshop.openSession()
    const other = await fixture.workshop.toolset.run(
      { name: 'js_eval', input: { code: 'typeof where', session: 'scratchpad' } },
      connection.context(),
    )
    assert.equal(evalValue(other), 'undefined')
  })

  it('stops at timeout_s and says the session kept its definitions', async () => {
    await using fixture = await evalWorkshop()
    await fixture.run('const survivor = 1')
    const content = evalError(await fixture.run('while (true) {}', { timeout_s: 0.3 }), 'timeout')
    assert.match(content, /time limit[\s\S]*keeps its definitions/)
    assert.match(
      content,
      /It had 0\.3 s: if it was still working, call again with a longer timeout_s \(up to 600\)/,
    )
    assert.equal(evalValue(await fixture.run('survivor')), '1')
  })

  it('cancels with the call, and the next eval says when the definitions were lost', async () => {
    await using fixture = await evalWorkshop()
    await fixture.run('const lost = 1')
    const controller = new AbortController()
    const pending = fixture.workshop.call(
      'js_eval',
      { code: 'while (true) {}' },
      { signal: controller.signal },
    )
    // Cancel once the eval runs: after the snapshot of main taken before it.
    for (;;) {
      const snapshots = await fixture.workshop.lines.snapshots.list()
      if (snapshots.some((record) => record.call?.detail === 'while (true) {}')) break
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    setTimeout(() => controller.abort(), 200)
    assert.equal(
      evalError(await pending, 'cancelled'),
      'Tool call cancelled: "js_eval" was stopped before it finished.',
    )
    const next = await fixture.run('typeof lost')
    assert.equal(
      evalValue(next),
      '[session reset: an eval was cancelled while it computed; earlier definitions are gone]\nundefined',
    )
    assert.match(String(next.metadata['sessionReset']), /cancelled/)
  })

  it('is unavailable without a code sandbox', async () => {
    const result = await runToolCall(jsEvalTool, { code: '1' }, contextWith())
    assert.equal(result.type === 'error' && result.code, 'not_available')
  })

  it('refuses a bad session name or timeout as invalid input', async () => {
    const result = await runToolCall(
      jsEvalTool,
      { code: '1', session: '../other', timeout_s: 0 },
      contextWith(),
    )
    assert.equal(result.type === 'error' && result.code, 'invalid_input')
    assert.match(result.content, /- session: /)
    assert.match(result.content, /- timeout_s: /)
  })

  it('fails closed where bubblewrap cannot run its sandbox: no code runs, the answer says why', async () => {
    await using fixture = await evalWorkshop({ workshop: { bwrap: '/nonexistent/bwrap' } })
    const content = evalError(await fixture.run('6 * 7'), 'jail_unavailable')
    assert.match(content, /sandbox process runs inside bubblewrap .*no code ran/)
    assert.match(content, /To fix: install it/)
    // The control: the explicit opt-out runs the same eval without bubblewrap.
    await using unconfined = await evalWorkshop({
      workshop: { bwrap: '/nonexistent/bwrap', evaluation: { confinement: 'none' } },
    })
    assert.equal(evalValue(await unconfined.run('6 * 7')), '42')
  })
})
