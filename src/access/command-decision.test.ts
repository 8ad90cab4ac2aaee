import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { CommandJudgement, CommandVerdict } from '../ports/access-context.ts'
import { decideCommand, type CommandDecisionInput } from './command-decision.ts'

function judged(verdict: CommandVerdict): CommandJudgement {
  const finding = { verdict, rule: `rule-${verdict}`, reason: `because ${verdict}` }
  return { ...finding, parts: [{ ...finding, command: 'cmd' }] }
}

function input(
  verdict: CommandVerdict,
  overrides: Partial<CommandDecisionInput> = {},
): CommandDecisionInput {
  return {
    command: 'cmd',
    judgement: judged(verdict),
    level: 'workspace-write',
    capped: false,
    capName: 'this session',
    approval: 'on-request',
    allowedByRule: false,
    ...overrides,
  }
}

/** A decision in one word: run, run-outside, refuse:RULE, ask, ask-outside. */
function shortly(decision: ReturnType<typeof decideCommand>): string {
  if (decision.type === 'run') return 'run'
  if (decision.type === 'refuse') return `refuse:${decision.rule}`
  return decision.confined ? 'ask' : 'ask-outside'
}

describe('decideCommand', () => {
  const rows: [string, CommandDecisionInput, string][] = [
    ['allow runs', input('allow'), 'run'],
    ['jail runs', input('jail'), 'run'],
    ['ask asks', input('ask'), 'ask'],
    ['deny refuses with its rule', input('deny'), 'refuse:rule-deny'],
    ['a deny rule beats allow', input('allow', { deniedBy: 'shell(cmd)' }), 'refuse:config-deny'],
    [
      'a deny rule beats an allow rule',
      input('ask', { deniedBy: 'x', allowedByRule: true }),
      'refuse:config-deny',
    ],
    ['an allow rule spares the question', input('ask', { allowedByRule: true }), 'run'],
    ['untrusted asks for jail', input('jail', { approval: 'untrusted' }), 'ask'],
    ['untrusted still runs allow', input('allow', { approval: 'untrusted' }), 'run'],
    [
      'untrusted and an allow rule',
      input('jail', { approval: 'untrusted', allowedByRule: true }),
      'run',
    ],
    [
      'never still asks for ask (a person or a refusal)',
      input('ask', { approval: 'never' }),
      'ask',
    ],
    ['read-only refuses ask', input('ask', { level: 'read-only' }), 'refuse:rule-ask'],
    [
      'read-only refuses ask even with an allow rule',
      input('ask', { level: 'read-only', allowedByRule: true }),
      'refuse:rule-ask',
    ],
    ['read-only runs jail', input('jail', { level: 'read-only' }), 'run'],
    ['escalation asks to run outside', input('jail', { escalate: { reason: 'r' } }), 'ask-outside'],
    [
      'escalation when capped is refused',
      input('jail', { escalate: { reason: 'r' }, capped: true }),
      'refuse:escalation-capped',
    ],
    [
      'escalation of a denied command is refused',
      input('deny', { escalate: { reason: 'r' } }),
      'refuse:rule-deny',
    ],
    [
      'escalation is never spared by an allow rule',
      input('allow', { escalate: { reason: 'r' }, allowedByRule: true }),
      'ask-outside',
    ],
  ]
  for (const [name, row, expected] of rows) {
    it(name, () => assert.equal(shortly(decideCommand(row)), expected))
  }

  it('asks a person with what a prompt shows, and reports a denial under the right rule', () => {
    const outside = decideCommand(input('jail', { escalate: { reason: 'needs the network' } }))
    assert.equal(outside.type, 'ask')
    if (outside.type !== 'ask') return
    assert.equal(outside.request.access, 'full-access')
    assert.equal(outside.request.dangerous, true)
    assert.equal(outside.request.reason, 'needs the network')
    assert.deepEqual(outside.denied, { rule: 'escalation-denied' })
    const inside = decideCommand(input('ask', { level: 'workspace-write' }))
    assert.equal(inside.type, 'ask')
    if (inside.type !== 'ask') return
    assert.equal(inside.request.rule, 'shell(cmd)')
    assert.equal(inside.request.dangerous, false)
    assert.deepEqual(inside.denied, { rule: 'rule-ask', reason: 'because ask' })
  })

  it('names what caps the access in its refusals', () => {
    const capped = decideCommand(
      input('jail', { escalate: { reason: 'r' }, capped: true, capName: 'plan mode' }),
    )
    assert.match(capped.type === 'refuse' ? capped.reason : '', /not available in plan mode/)
    const readOnly = decideCommand(input('ask', { level: 'read-only', capName: 'plan mode' }))
    assert.match(
      readOnly.type === 'refuse' ? readOnly.reason : '',
      /which plan mode keeps read-only/,
    )
  })
})
