import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { CommandPolicy } from './command-policy/command-policy.ts'
import { JsonLinesApprovalLog } from './approval-log.ts'
import type { ApprovalDecision, ApprovalRequest } from './approval.ts'
import { createAccess, type CreateAccessOptions } from './create-access.ts'
import { SessionAccess } from './session-access.ts'

const signal = new AbortController().signal

/** An approver that answers from a script and remembers what it was asked. */
function scripted(...answers: ApprovalDecision['type'][]) {
  const asked: ApprovalRequest[] = []
  return {
    asked,
    approver: async (request: ApprovalRequest): Promise<ApprovalDecision> => {
      asked.push(request)
      const type = answers.shift() ?? 'denied'
      return type === 'denied' || type === 'unavailable'
        ? { type, by: 'tester', reason: 'no' }
        : { type, by: 'tester' }
    },
  }
}

const policy = await CommandPolicy.load()
const judge = async (command: string, options: { escalate?: boolean }) =>
  policy.judge(command, options)
const make = (options: CreateAccessOptions = {}) => createAccess({ judge, ...options })

describe('the clamp: effective access is the minimum, never a replacement', () => {
  const cases: { name: string; options: CreateAccessOptions; effective: string }[] = [
    { name: 'no session options: the default setting', options: {}, effective: 'workspace-write' },
    {
      name: 'plan over a wider setting',
      options: { setting: 'full-access', mode: 'plan' },
      effective: 'read-only',
    },
    {
      name: 'plan over workspace-write',
      options: { setting: 'workspace-write', mode: 'plan' },
      effective: 'read-only',
    },
    {
      name: 'a mode cap wider than the setting: minimum, not replace',
      options: {
        setting: 'read-only',
        mode: 'build',
        modes: [{ name: 'build', description: 'b', access: 'workspace-write' }],
      },
      effective: 'read-only',
    },
    {
      name: 'a mode without a cap leaves the setting alone',
      options: {
        setting: 'full-access',
        mode: 'review',
        modes: [{ name: 'review', description: 'r' }],
      },
      effective: 'full-access',
    },
    {
      name: 'a parent cap binds a child',
      options: { setting: 'full-access', caps: ['workspace-write'] },
      effective: 'workspace-write',
    },
    {
      name: 'every cap in force counts',
      options: { setting: 'full-access', caps: ['workspace-write', 'read-only'] },
      effective: 'read-only',
    },
  ]
  for (const { name, options, effective } of cases) {
    it(name, () => assert.equal(make(options).effective, effective))
  }

  it('a setting changed during plan re-emerges intact when plan ends', async () => {
    const { approver } = scripted('approved', 'approved')
    const access = make({ setting: 'workspace-write', mode: 'plan', approver })
    assert.equal((await access.changeSetting('full-access', { signal })).changed, true)
    assert.equal(access.effective, 'read-only', 'plan still caps')
    await access.setMode('default', { signal })
    assert.equal(access.effective, 'full-access')
  })

  it('a setting narrower than the cap stays narrower after the mode changes', async () => {
    const access = make({ setting: 'workspace-write', mode: 'plan' })
    await access.changeSetting('read-only', { signal })
    const { approver } = scripted('approved')
    const widened = make({ setting: 'read-only', mode: 'plan', approver })
    await widened.setMode('default', { signal })
    assert.equal(widened.effective, 'read-only')
    assert.equal(access.setting, 'read-only')
  })
})

describe('modes', () => {
  it('narrowing is immediate and asks no one', async () => {
    const { approver, asked } = scripted()
    const access = make({ approver })
    const outcome = await access.setMode('plan', { signal })
    assert.deepEqual([outcome.changed, asked.length, access.effective], [true, 0, 'read-only'])
  })

  it('widening goes through the approver; a denial keeps the cap', async () => {
    const { approver, asked } = scripted('denied')
    const access = make({ mode: 'plan', approver })
    const outcome = await access.setMode('default', { signal })
    assert.equal(outcome.changed, false)
    assert.equal(outcome.refused, true)
    assert.equal(asked.length, 1)
    assert.equal(access.mode.name, 'plan')
  })

  it('without an approver a model can never lift its own cap', async () => {
    const access = make({ mode: 'plan' })
    const outcome = await access.setMode('default', { signal })
    assert.equal(outcome.refused, true)
    assert.equal(access.effective, 'read-only')
  })

  it('a call in flight keeps the access it started with; the switch applies to the next call', async () => {
    const access = make()
    const inFlight = access.snapshot()
    await access.setMode('plan', { signal })
    assert.equal(inFlight.level, 'workspace-write')
    assert.equal(access.snapshot().level, 'read-only')
  })

  it('refuses an unknown mode, listing the available ones', async () => {
    await assert.rejects(
      make().setMode('yolo', { signal }),
      /unknown mode "yolo": available modes: default, plan/,
    )
    assert.throws(() => make({ mode: 'nope' }), /unknown mode "nope"/)
  })

  it('narrowing stops background jobs started with wider access, and says so', async () => {
    const stopped: string[] = []
    const narrowed = new SessionAccess({
      onNarrow: async (level) => {
        stopped.push(level)
        return ['job-1', 'job-3']
      },
    })
    const outcome = await narrowed.setMode('plan', { signal })
    assert.deepEqual(stopped, ['read-only'])
    assert.match(outcome.message, /Stopped background jobs started with wider access: job-1, job-3/)
  })
})

describe('commands and approval', () => {
  it('on-request: a command the policy judges ask goes to the approver, once approved it runs confined', async () => {
    const { approver, asked } = scripted('approved')
    const decision = await make({ approver })
      .snapshot()
      .authorizeCommand({ command: 'git clean -f', signal })
    assert.deepEqual(decision, { type: 'run', confined: true })
    assert.equal(asked[0]?.summary, 'git clean -f')
  })

  it('on-request: a denial refuses and names the rule that would allow it', async () => {
    const { approver } = scripted('denied')
    const decision = await make({ approver })
      .snapshot()
      .authorizeCommand({ command: 'git clean -f', signal })
    assert.equal(decision.type, 'refused')
    assert.match(decision.type === 'refused' ? decision.reason : '', /shell\(git clean -f\)/)
  })

  it('approved-for-session remembers the exact command, not a prefix', async () => {
    const { approver, asked } = scripted('approved-for-session', 'denied')
    const access = make({ approver })
    await access.snapshot().authorizeCommand({ command: 'git clean -f', signal })
    assert.equal(
      (await access.snapshot().authorizeCommand({ command: 'git clean -f', signal })).type,
      'run',
    )
    assert.equal(asked.length, 1, 'the same command is not asked again')
    assert.equal(
      (await access.snapshot().authorizeCommand({ command: 'git clean -f src', signal })).type,
      'refused',
    )
    assert.equal(asked.length, 2, 'another command is asked')
  })

  it('never: nothing is asked, what needs approval is refused with the way to allow it', async () => {
    const { approver, asked } = scripted('approved')
    const decision = await make({ approver, approval: 'never' })
      .snapshot()
      .authorizeCommand({ command: 'git clean -f', signal })
    assert.equal(decision.type, 'refused')
    assert.equal(asked.length, 0)
    assert.match(
      decision.type === 'refused' ? decision.reason : '',
      /approval policy is never.*shell\(git clean -f\)/,
    )
  })

  it('untrusted: asks for anything not known to be read-only, not for read-only commands', async () => {
    const { approver, asked } = scripted('approved')
    const access = make({ approver, approval: 'untrusted' })
    assert.equal(
      (await access.snapshot().authorizeCommand({ command: 'ls -la && cat README.md', signal }))
        .type,
      'run',
    )
    assert.equal(asked.length, 0)
    assert.equal(
      (await access.snapshot().authorizeCommand({ command: 'npm test', signal })).type,
      'run',
    )
    assert.equal(asked.length, 1)
  })

  it('an allow rule means no question; in a compound command every part must match', async () => {
    const { approver, asked } = scripted('denied', 'denied')
    const access = make({
      approver,
      approval: 'untrusted',
      rules: { allow: ['shell(npm run test:*)', 'shell(git commit *)'] },
    })
    assert.equal(
      (
        await access
          .snapshot()
          .authorizeCommand({ command: 'npm run test:unit && git commit -m x', signal })
      ).type,
      'run',
    )
    assert.equal(asked.length, 0)
    assert.equal(
      (
        await access
          .snapshot()
          .authorizeCommand({ command: 'npm run test:unit && npm publish', signal })
      ).type,
      'refused',
    )
    assert.equal(asked.length, 1, 'the part without a rule makes it ask')
  })

  it('deny wins over allow, and over the policy', async () => {
    const access = make({
      rules: { allow: ['shell(git status *)', 'shell'], deny: ['shell(git status *)'] },
    })
    const decision = await access
      .snapshot()
      .authorizeCommand({ command: 'ls; git status --short', signal })
    assert.equal(decision.type === 'refused' && decision.rule, 'config-deny')
  })

  it('the policy denies without asking anyone', async () => {
    const { approver, asked } = scripted('approved')
    const decision = await make({ approver })
      .snapshot()
      .authorizeCommand({ command: 'sudo id', signal })
    assert.equal(decision.type === 'refused' && decision.rule, 'privilege')
    assert.equal(asked.length, 0)
  })

  it('escalation under a cap is refused with the plan-mode message; the same call without it runs', async () => {
    const { approver, asked } = scripted('approved')
    const access = make({ mode: 'plan', approver })
    const escalated = await access
      .snapshot()
      .authorizeCommand({ command: 'npm ci', escalate: { reason: 'needs the network' }, signal })
    assert.equal(escalated.type, 'refused')
    assert.match(
      escalated.type === 'refused' ? escalated.reason : '',
      /^escalation is not available in plan mode — put the wider step in the plan/,
    )
    assert.equal(asked.length, 0)
    assert.deepEqual(await access.snapshot().authorizeCommand({ command: 'npm ci', signal }), {
      type: 'run',
      confined: true,
    })
  })

  it('a run outside the jail approved for the session holds while the files are as shown, and never for files changed while asked', async () => {
    let files = 'tree-1'
    const asked: ApprovalRequest[] = []
    const access = new SessionAccess({
      judge,
      setting: 'full-access',
      unconfinedState: async () => ({ files, once: false }),
      approver: async (request) => {
        asked.push(request)
        // The model's next call lands while the person reads the question.
        if (asked.length === 3) files = 'tree-3'
        return { type: 'approved-for-session', by: 'tester' }
      },
    })
    const run = () =>
      access
        .snapshot()
        .authorizeCommand({ command: './build.sh', escalate: { reason: 'host' }, signal })
    assert.equal((await run()).type, 'run')
    assert.equal((await run()).type, 'run')
    assert.equal(asked.length, 1, 'the same files: not asked again')
    assert.match(asked[0]?.sessionScope ?? '', /only while main's files stay exactly as they are/)
    files = 'tree-2'
    assert.equal((await run()).type, 'run')
    assert.equal(asked.length, 2, 'other files: asked again')
    files = 'tree-2b'
    const changed = await run()
    assert.equal(asked.length, 3)
    assert.equal(changed.type === 'refused' && changed.rule, 'escalation-changed')
  })

  it('escalation outside a cap goes to the approver, marked dangerous; approved, it runs unconfined', async () => {
    const { approver, asked } = scripted('approved')
    const decision = await make({ setting: 'full-access', approver })
      .snapshot()
      .authorizeCommand({ command: 'npm ci', escalate: { reason: 'needs the network' }, signal })
    assert.deepEqual(decision, { type: 'run', confined: false, approvedBy: 'tester' })
    assert.equal(asked[0]?.dangerous, true)
    assert.equal(asked[0]?.access, 'full-access')
  })

  it('approve tells a person’s no apart from nobody to ask (no terminal, no elicitation, never)', async () => {
    const request = { tool: 'run_settle', input: {}, reason: 'r', summary: 's', signal }
    const answer = async (options: CreateAccessOptions) =>
      (await make(options).snapshot().approve?.(request))?.type
    assert.equal(await answer({ approver: scripted('approved').approver }), 'approved')
    assert.equal(await answer({ approver: scripted('denied').approver }), 'refused')
    assert.equal(await answer({ approver: scripted('unavailable').approver }), 'unavailable')
    assert.equal(await answer({}), 'unavailable', 'no approver: nobody to ask')
    const never = { approver: scripted('approved').approver, approval: 'never' as const }
    assert.equal(await answer(never), 'unavailable')
  })

  it('records every decision: time, tool, input digest, decision, by whom', async () => {
    const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-approvals-'))
    try {
      const recorder = new JsonLinesApprovalLog(folder)
      const { approver } = scripted('approved', 'denied')
      const access = make({ approver, recorder })
      await access.snapshot().authorizeCommand({ command: 'git clean -f', signal })
      await access.snapshot().authorizeCommand({ command: 'git clean -fx', signal })
      await make({ recorder, approval: 'never' })
        .snapshot()
        .authorizeCommand({ command: 'git clean -f', signal })
      const records = await recorder.list()
      assert.deepEqual(
        records.map((record) => [record.tool, record.decision, record.by]),
        [
          ['shell', 'approved', 'tester'],
          ['shell', 'denied', 'policy'],
        ],
      )
      assert.match(records[0]?.inputDigest ?? '', /^sha256:[0-9a-f]{64}$/)
      assert.ok(!Number.isNaN(Date.parse(records[0]?.time ?? '')))
    } finally {
      await fs.rm(folder, { recursive: true, force: true })
    }
  })
})
