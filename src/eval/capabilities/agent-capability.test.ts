/**
 * The `agent` namespace of js_eval in real isolates over a real workshop and store: roster
 * values checked by the host's rules (errors naming the agent and the field), hire refusals
 * that admit nothing, a join and a race of scripted agents (the loser cancelled, nothing left
 * running), a handle refused in another session, a roster read from a workspace file, and a
 * context without agents refused naming what is missing.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { rosterRules } from '../../agent/roster-value-rules.ts'
import { EitriError } from '../../errors/eitri-error.ts'
import type { ToolContext } from '../../tool/tool-context.ts'
import type { CapabilityScope } from '../capability.ts'
import { agentCapability } from './agent-capability.ts'
import type { ToolResult } from '../../tool/tool-result.ts'
import { evalError, evalValue, evalWorkshop } from './test-eval-workshop.ts'

/** The message of an error the guest's call threw with the host's `code`. */
function guestError(result: ToolResult, code: string): string {
  const content = evalError(result, 'eval_error')
  assert.ok(content.includes(`[${code}]`), `${code} expected:\n${content}`)
  return content
}

const TEAM = `const team = await agent.roster([
  { id: 'fast', program: { kind: 'scripted', delayMs: 10, result: { who: 'fast' } } },
  { id: 'slow', program: { kind: 'scripted', delayMs: 5000, result: { who: 'slow' } } },
  { id: 'idle', program: { kind: 'scripted', delayMs: 600000, result: { who: 'idle' } } },
])\n`

describe('js_eval agent namespace', () => {
  it('gives immutable roster values checked by the host’s rules', async () => {
    await using eval_ = await evalWorkshop()
    const value = evalValue(
      await eval_.run(`
        const empty = await agent.roster()
        const one = await empty.make({ id: 'writer', skills: ['prose'], program: { kind: 'echo' } })
        const two = await one.make({ id: 'coder', skills: ['ts', 'prose'], program: { kind: 'echo' } })
        const again = await two.make({ id: 'coder', skills: ['prose', 'ts'], program: { kind: 'echo' } })
        const revised = await two.revise('coder', { status: 'unavailable' })
        ;({
          empty: (await empty.list()).length,
          one: (await one.list()).map((def) => def.id),
          two: (await two.list()).map((def) => def.id + '@' + def.version),
          again: again.agents.length,
          revised: (await revised.lookup('coder')).version,
          old: (await two.lookup('coder')).status,
          available: (await revised.select({ status: 'available' })).map((def) => def.id),
          prose: (await two.select({ skill: 'prose', where: (def) => def.id.startsWith('c') })).map((def) => def.id),
          json: JSON.parse(JSON.stringify(two)).agents.length,
        })`),
    )
    assert.match(value, /empty: 0/)
    assert.match(value, /one: \[ *"writer" *\]/)
    assert.match(value, /two: \[ *"coder@1", "writer@1" *\]/)
    assert.match(value, /again: 2/)
    assert.match(value, /revised: 2/)
    assert.match(value, /old: "available"/)
    assert.match(value, /available: \[ *"writer" *\]/)
    assert.match(value, /prose: \[ *"coder" *\]/)
    assert.match(value, /json: 2/)
  })

  it('refuses a wrong definition, change, ref or selector as the host roster does', async () => {
    await using eval_ = await evalWorkshop()
    const typo = guestError(
      await eval_.run(
        `await agent.roster([{ id: 'bot', program: { kind: 'scripted', repy: 'hi' } }])`,
      ),
      'invalid_input',
    )
    assert.match(typo, /program/)
    assert.match(typo, /repy/)
    assert.match(
      guestError(
        await eval_.run(
          `const r = await agent.roster([{ id: 'bot', program: { kind: 'echo' } }]); await r.revise('bot', { id: 'other' })`,
        ),
        'invalid_input',
      ),
      /revise cannot change an agent's id/,
    )
    assert.match(
      guestError(
        await eval_.run(
          `const r2 = await (await agent.roster([{ id: 'bot', program: { kind: 'echo' } }])).revise('bot', { name: 'Bot' }); await r2.lookup({ id: 'bot', version: 1 })`,
        ),
        'conflict',
      ),
      /version 1 is stale: the roster holds version 2/,
    )
    assert.match(
      guestError(await eval_.run(`await r.select({ skil: 'x' })`), 'invalid_input'),
      /select: skil: unknown criterion/,
    )
    assert.match(
      guestError(await eval_.run(`await r.select({ where: 'x' })`), 'invalid_input'),
      /select: where: must be a function/,
    )
    assert.match(
      guestError(
        await eval_.run(`await r.make({ id: 'bot', program: { kind: 'scripted' } })`),
        'conflict',
      ),
      /already in the roster/,
    )
    // A roster forged in the guest is checked again on the host.
    assert.match(
      guestError(
        await eval_.run(`await agent.hire({ agents: [{ id: 'Bad Id' }] }, 'x', { task: 1 })`),
        'invalid_input',
      ),
      /agents\[0\].*id/,
    )
  })

  it('refuses a bad hire before anything is written, and never takes a parent Run', async () => {
    await using eval_ = await evalWorkshop()
    const refusals: [string, RegExp][] = [
      [`agent.hire(team, 'fast', { task: 'x', parentRun: 'r1' })`, /parentRun cannot be named/],
      [
        `agent.hire(team, 'fast', { task: 'x', setlement: 'discard' })`,
        /setlement is an unknown option/,
      ],
      [`agent.hire(team, 'fast', {})`, /task is required/],
      [`agent.hire(team, 'fast', { task: 'x', settlement: 'later' })`, /settlement must be one of/],
      [`agent.hire(team, 'nobody', { task: 'x' })`, /No agent "nobody" in the roster/],
      [`agent.hire(team, 'fast', { task: 'x', limits: { steps: 3 } })`, /limits\.steps/],
    ]
    evalValue(await eval_.run(`${TEAM}; 1`))
    for (const [code, message] of refusals) {
      const result = await eval_.run(`await ${code}`)
      assert.equal(result.type, 'error', code)
      assert.match(result.content, message, code)
    }
    assert.deepEqual(await eval_.workshop.store.listRuns(), [])
  })

  it('joins two Runs and races two, the loser cancelled and nothing left running', async () => {
    await using eval_ = await evalWorkshop()
    const joined = evalValue(
      await eval_.run(`${TEAM}
        const a = await agent.hire(team, 'fast', { task: 'one' })
        const b = await agent.hire(team, 'fast', { task: 'two' })
        const results = await agent.join([a, b])
        results.map((r) => r.status + ':' + r.value.who + ':' + r.settlementStatus).join(',')`),
    )
    assert.match(joined, /^completed:fast:merged,completed:fast:merged$/)
    const started = Date.now()
    const raced = evalValue(
      await eval_.run(`
        const f = await agent.hire(team, 'fast', { task: 'race' })
        const s = await agent.hire(team, 'slow', { task: 'race' })
        const winner = await agent.race([s, f])
        const loser = await s.observe()
        ;[winner.id === f.id, winner.value.who, loser.status, loser.settlementStatus].join(',')`),
    )
    assert.ok(Date.now() - started < 4000, 'the race did not wait for the slow agent')
    assert.match(raced, /^true,fast,cancelled,discarded$/)
    const runs = await eval_.workshop.store.listRuns()
    assert.equal(runs.length, 4)
    assert.deepEqual(
      runs.filter((run) => run.status === 'running'),
      [],
    )
    assert.equal(runs.filter((run) => run.status === 'cancelled').length, 1)
  })

  it('gives a passive wait, an owned wait, observe, cancel and map', async () => {
    await using eval_ = await evalWorkshop()
    const value = evalValue(
      await eval_.run(`${TEAM}
        const s = await agent.hire(team, 'slow', { task: 'x' })
        const seen = await s.observe()
        const cancelled = await s.cancel()
        const after = await s.result()
        const mapped = await agent.map([1, 2, 3], async (n, i) => {
          const h = await agent.hire(team, 'fast', { task: n })
          return (await h.ownedResult()).status + i
        }, { concurrency: 2 })
        ;[seen.status, seen.children.length, cancelled, after.status, mapped.join('/')].join(',')`),
    )
    assert.match(value, /^running,0,true,cancelled,completed0\/completed1\/completed2$/)
    assert.match(
      guestError(
        await eval_.run(`await agent.map([1], (n) => n, { concurrency: 0 })`),
        'invalid_input',
      ),
      /concurrency must be a positive whole number/,
    )
  })

  it('cancels an owned wait’s Run when the eval ends, and leaves a passive wait’s Run running', async () => {
    await using eval_ = await evalWorkshop()
    const [owned, kept] = JSON.parse(
      evalValue(
        await eval_.run(
          `${TEAM}; JSON.stringify([(await agent.hire(team, 'slow', { task: 'x' })).id, (await agent.hire(team, 'slow', { task: 'y' })).id])`,
        ),
      ),
    ) as [string, string]
    const timedOut = await eval_.run(`await agent.handle('${owned}').ownedResult()`, {
      timeout_s: 1,
    })
    assert.equal(timedOut.type, 'error')
    const passive = await eval_.run(`await agent.handle('${kept}').result()`, { timeout_s: 1 })
    assert.equal(passive.type, 'error')
    const statusOf = async (id: string) => (await eval_.workshop.store.getRun(id))?.status
    for (let tries = 0; tries < 50 && (await statusOf(owned)) === 'running'; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    assert.equal(await statusOf(owned), 'cancelled')
    assert.equal(await statusOf(kept), 'running')
  })

  it('refuses a handle from another session', async () => {
    await using eval_ = await evalWorkshop()
    const id = evalValue(
      await eval_.run(`${TEAM}; (await agent.hire(team, 'idle', { task: 'mine' })).id`),
    ).replaceAll("'", '')
    await using other = await eval_.workshop.openSession()
    const run = (code: string) =>
      eval_.workshop.toolset.run({ name: 'js_eval', input: { code } }, other.context())
    for (const code of [
      `await agent.handle(${JSON.stringify(id)}).result()`,
      `await agent.join([${JSON.stringify(id)}])`,
      `await agent.race([{ id: ${JSON.stringify(id)} }])`,
      `await agent.handle(${JSON.stringify(id)}).cancel()`,
    ]) {
      assert.match(
        guestError(await run(code), 'permission_denied'),
        /not hired by this session|hired by another session/,
        code,
      )
    }
    // Observing reads any Run; the Run is still the first session's, and still running.
    assert.match(
      evalValue(await run(`(await agent.handle(${JSON.stringify(id)}).observe()).status`)),
      /running/,
    )
    // Positive control: the session that hired it may cancel it.
    assert.match(
      evalValue(await eval_.run(`await agent.handle(${JSON.stringify(id)}).cancel()`)),
      /true/,
    )
  })

  it('hires from a roster file in the workspace, naming the file in its errors', async () => {
    await using eval_ = await evalWorkshop({
      files: {
        'team.json': JSON.stringify({
          agents: [{ id: 'helper', program: { kind: 'scripted', result: 42 } }],
        }),
        'broken.json': JSON.stringify({
          agents: [{ id: 'helper', program: { kind: 'echo', delay: 5 } }],
        }),
        'not-json.json': '{ agents: ',
      },
    })
    assert.match(
      evalValue(
        await eval_.run(
          `const h = await agent.hire('team.json', 'helper', { task: 'x' }); (await h.result()).value`,
        ),
      ),
      /42/,
    )
    const broken = guestError(
      await eval_.run(`await agent.hire('broken.json', 'helper', { task: 'x' })`),
      'invalid_input',
    )
    assert.match(broken, /Roster file broken\.json is invalid/)
    assert.match(broken, /agents\[0\] \(id "helper"\).*delay/)
    assert.match(
      guestError(
        await eval_.run(`await agent.hire('not-json.json', 'helper', { task: 'x' })`),
        'invalid_input',
      ),
      /Roster file not-json\.json is refused: not valid JSON/,
    )
    assert.match(
      guestError(
        await eval_.run(`await agent.hire('missing.json', 'helper', { task: 'x' })`),
        'not_found',
      ),
      /Roster file not found: missing\.json/,
    )
    // The session's access applies: a protected path is refused as for any read.
    const outside = await eval_.run(`await agent.hire('../team.json', 'helper', { task: 'x' })`)
    assert.equal(outside.type, 'error')
    assert.match(outside.content, /outside the workspace/)
    assert.equal((await eval_.workshop.store.listRuns()).length, 1)
  })

  it('describes its surface in sandbox.doc', async () => {
    await using eval_ = await evalWorkshop()
    const doc = evalValue(
      await eval_.run(`(await sandbox.doc('agent')).functions.map((f) => f.signature).join('\\n')`),
    )
    assert.match(doc, /roster\(defs\?/)
    assert.match(doc, /race\(handles/)
    assert.doesNotMatch(doc, /rosterMake/)
  })

  it('refuses to hire where there are no agents, naming what is missing', async () => {
    const capability = agentCapability(rosterRules)
    const hire = capability.functions.find((fn) => fn.name === 'hire')
    assert.ok(hire !== undefined)
    const ctx = { signal: new AbortController().signal } as unknown as ToolContext
    const scope = { ctx } as unknown as CapabilityScope
    await assert.rejects(
      hire.run(['team.json', 'helper', { task: 'x' }] as never, scope),
      (error: unknown) =>
        EitriError.isInstance(error) &&
        error.code === 'not_available' &&
        /agent\.hire needs the session's agents \(a store of Runs\)/.test(error.message),
    )
  })
})
