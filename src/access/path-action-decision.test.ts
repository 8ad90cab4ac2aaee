import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { PathAction } from '../ports/access-context.ts'
import { decidePathAction, type PathActionDecisionInput } from './path-action-decision.ts'

type Action = Omit<PathAction, 'signal'>

const write: Action = { tool: 'write_file', operation: 'write', path: 'a.txt' }
const read: Action = { tool: 'read_file', operation: 'read', path: 'a.txt' }
const hook = { code: 'protected_path', reason: 'a hook runs on the host' } as const
const protectedWrite: Action = { ...write, path: '.git/hooks/x', refusal: hook }
const outsideWrite: Action = {
  ...write,
  path: '/etc/x',
  refusal: { code: 'path_outside_workspace', reason: '/etc/x is outside the workspace' },
}

function input(
  action: Action,
  overrides: Partial<PathActionDecisionInput> = {},
): PathActionDecisionInput {
  return {
    action,
    level: 'workspace-write',
    capName: 'this session',
    approval: 'on-request',
    ...overrides,
  }
}

/** A decision in one word: allowed[:exemption], refused:CODE, ask[:exemption]. */
function shortly(decision: ReturnType<typeof decidePathAction>): string {
  if (decision.type === 'refused') return `refused:${decision.code}`
  const exemption = decision.exemption === undefined ? '' : `:${decision.exemption}`
  return `${decision.type === 'allowed' ? 'allowed' : 'ask'}${exemption}`
}

const rule = { source: 'write_file(.git/hooks/x)', withoutApproval: false }
const quietRule = { ...rule, withoutApproval: true }

describe('decidePathAction', () => {
  const rows: [string, PathActionDecisionInput, string][] = [
    ['a write in the workspace', input(write), 'allowed'],
    ['a read', input(read), 'allowed'],
    [
      'a read the path policy refused stays refused',
      input({ ...read, refusal: hook }),
      'refused:protected_path',
    ],
    [
      'a deny rule beats everything',
      input(write, { deniedBy: 'write_file(a.txt)' }),
      'refused:permission_denied',
    ],
    [
      'a deny rule beats a read',
      input(read, { deniedBy: 'read_file(a.txt)' }),
      'refused:permission_denied',
    ],
    [
      'a write under read-only access',
      input(write, { level: 'read-only' }),
      'refused:read_only_access',
    ],
    ['a read under read-only access', input(read, { level: 'read-only' }), 'allowed'],
    [
      'outside the workspace without full access',
      input(outsideWrite),
      'refused:path_outside_workspace',
    ],
    [
      'outside the workspace with full access asks',
      input(outsideWrite, { level: 'full-access' }),
      'ask:outside',
    ],
    ['a protected path without a rule', input(protectedWrite), 'refused:protected_path'],
    [
      'a protected path with a rule asks',
      input(protectedWrite, { allowedBy: rule }),
      'ask:protected',
    ],
    [
      'a protected path with a rule without approval',
      input(protectedWrite, { allowedBy: quietRule }),
      'allowed:protected',
    ],
    [
      'a protected path under read-only access',
      input(protectedWrite, { level: 'read-only', allowedBy: quietRule }),
      'refused:read_only_access',
    ],
    ['untrusted asks for a write', input(write, { approval: 'untrusted' }), 'ask'],
    [
      'untrusted and an allow rule',
      input(write, { approval: 'untrusted', allowedBy: quietRule }),
      'allowed',
    ],
    ['untrusted reads freely', input(read, { approval: 'untrusted' }), 'allowed'],
  ]
  for (const [name, row, expected] of rows) {
    it(name, () => assert.equal(shortly(decidePathAction(row)), expected))
  }

  it('tells how to leave a read-only mode, or whom to ask', () => {
    const inMode = decidePathAction(
      input(write, { level: 'read-only', capName: 'plan mode', readOnlyMode: 'plan' }),
    )
    assert.match(
      inMode.type === 'refused' ? inMode.reason : '',
      /Leave plan mode with exit_plan_mode/,
    )
    const bySetting = decidePathAction(input(write, { level: 'read-only' }))
    assert.match(bySetting.type === 'refused' ? bySetting.reason : '', /Ask the user to widen/)
  })

  it('reports a person’s no under the code of what was asked', () => {
    const outside = decidePathAction(input(outsideWrite, { level: 'full-access' }))
    assert.equal(outside.type === 'ask' && outside.deniedCode, 'permission_denied')
    assert.equal(outside.type === 'ask' && outside.request.dangerous, true)
    const guarded = decidePathAction(
      input({ ...protectedWrite, change: 'remove' }, { allowedBy: rule }),
    )
    assert.equal(guarded.type === 'ask' && guarded.deniedCode, 'protected_path')
    assert.equal(guarded.type === 'ask' && guarded.request.summary, 'remove protected .git/hooks/x')
  })
})
