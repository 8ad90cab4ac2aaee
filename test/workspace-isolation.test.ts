/**
 * Every tool follows its fork: files, shell and js_eval see the line they are bound to and
 * nothing else, both ways; merges reach main only with a person's yes.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import type { ApprovalDecision } from '../src/access/approval.ts'
import { openJailedWorkshop } from './helpers/committed-project.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

const open = openJailedWorkshop

const live = (scratch: Scratch, name: string) =>
  fs.readFile(path.join(scratch.workspace, name), 'utf8').catch(() => undefined)
const approve = async (): Promise<ApprovalDecision> => ({ type: 'approved', by: 'tester' })

describe('isolation between main and a fork, both ways', () => {
  it('file tools: writes in the fork stay there; main’s later changes do not appear in it', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main v1\n' })
    await using workshop = await open(scratch)
    const fork = await workshop.call('workspace_fork', { name: 'try' })
    assert.equal(fork.type, 'success', fork.content)
    const session = await workshop.openSession()
    const call = (name: string, input: unknown) =>
      workshop.toolset.run({ name, input }, session.context())
    assert.equal((await call('workspace_use', { fork: 'try' })).type, 'success')
    assert.equal((await call('write_file', { path: 'a.txt', content: 'fork\n' })).type, 'success')
    assert.equal(
      (await call('write_file', { path: 'new.txt', content: 'only in the fork\n' })).type,
      'success',
    )
    assert.equal(await live(scratch, 'a.txt'), 'main v1\n')
    assert.equal(await live(scratch, 'new.txt'), undefined)
    await fs.writeFile(path.join(scratch.workspace, 'later.txt'), 'main after the fork\n')
    const missing = await call('read_file', { path: 'later.txt' })
    assert.equal(missing.type === 'error' && missing.code, 'not_found')
    assert.equal((await call('read_file', { path: 'a.txt' })).content, 'fork\n')
    assert.equal(
      (await workshop.call('read_file', { path: 'a.txt' })).content,
      'main v1\n',
      'the default session is still on main',
    )
    await session.close()
  })

  it('shell: a program in the fork writes the fork; main and its changes stay apart', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    await using workshop = await open(scratch)
    await workshop.call('workspace_fork', { name: 'sh' })
    await workshop.call('workspace_use', { fork: 'sh' })
    const ran = await workshop.call('shell', {
      command: 'cat a.txt; echo built > out.txt; rm a.txt; ls',
    })
    assert.equal(ran.type, 'success', ran.content)
    assert.match(ran.content, /^main\nout\.txt\n/)
    assert.equal(await live(scratch, 'a.txt'), 'main\n', 'the delete stayed in the fork')
    assert.equal(await live(scratch, 'out.txt'), undefined)
    assert.equal(
      (await workshop.call('read_file', { path: 'out.txt' })).content,
      'built\n',
      'the fork has it',
    )
    await fs.writeFile(path.join(scratch.workspace, 'from-main.txt'), 'x')
    assert.match(
      (await workshop.call('shell', { command: 'ls' })).content,
      /^out\.txt\n/,
      'main’s new file is not in the fork',
    )
  })

  it('js_eval: the fs capability acts on the fork', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    await using workshop = await open(scratch)
    await workshop.call('workspace_fork', { name: 'ev' })
    await workshop.call('workspace_use', { fork: 'ev' })
    const result = await workshop.call('js_eval', {
      code: 'await fs.writeFile("eval.txt", "from eval"); await fs.readFile("a.txt")',
    })
    assert.equal(result.type, 'success', result.content)
    assert.match(result.content, /main/)
    assert.equal(await live(scratch, 'eval.txt'), undefined)
    assert.equal(
      (await workshop.call('room_read', { path: 'eval.txt', fork: 'ev' })).content,
      'from eval',
    )
  })

  it('sibling forks never see each other', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'a' })
    await using workshop = await open(scratch)
    await workshop.call('workspace_fork', { name: 'left' })
    await workshop.call('workspace_fork', { name: 'right' })
    await workshop.call('room_write', { fork: 'left', files: [{ path: 'l.txt', content: 'l' }] })
    const right = await workshop.call('room_files', { fork: 'right' })
    assert.equal(right.content, 'a.txt')
  })
})

describe('merging', () => {
  it('into main only with the approver’s yes; the merge reaches the live folder', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'v1\n' })
    const asked: string[] = []
    await using workshop = await open(scratch, {
      approver: async (request) => {
        asked.push(request.summary)
        return approve()
      },
    })
    await workshop.call('workspace_fork', { name: 'm' })
    await workshop.call('room_write', {
      fork: 'm',
      files: [{ path: 'a.txt', content: 'v2\n' }],
      message: 'edit a',
    })
    const merged = await workshop.call('workspace_merge', { fork: 'm' })
    assert.equal(merged.type, 'success', merged.content)
    assert.match(
      asked[0] ?? '',
      /^merge m into main \(your live folder\): 1 file: a\.txt \(modified\)$/,
    )
    assert.equal(await live(scratch, 'a.txt'), 'v2\n')
  })

  it('refused without a person, and nothing changes', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'v1\n' })
    await using workshop = await open(scratch)
    await workshop.call('workspace_fork', { name: 'm' })
    await workshop.call('room_write', { fork: 'm', files: [{ path: 'a.txt', content: 'v2\n' }] })
    const refused = await workshop.call('workspace_merge', { fork: 'm' })
    assert.equal(refused.type === 'error' && refused.code, 'permission_denied')
    assert.equal(await live(scratch, 'a.txt'), 'v1\n')
  })

  it('reports a conflict with both sides and loses nothing', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'one\n' })
    await using workshop = await open(scratch, { approver: approve })
    await workshop.call('workspace_fork', { name: 'c' })
    await workshop.call('room_write', { fork: 'c', files: [{ path: 'a.txt', content: 'fork\n' }] })
    await workshop.call('write_file', { path: 'a.txt', content: 'main\n' })
    const review = await workshop.call('workspace_review', { fork: 'c' })
    assert.match(review.content, /^Tier: conflict/)
    const conflict = await workshop.call('workspace_merge', { fork: 'c' })
    assert.equal(conflict.type === 'error' && conflict.code, 'merge_conflict')
    assert.match(
      conflict.content,
      /--- main side \(ours\):\nmain\n--- fork side \(theirs\):\nfork$/,
    )
    assert.equal(await live(scratch, 'a.txt'), 'main\n')
    assert.equal(
      (await workshop.call('room_read', { path: 'a.txt', fork: 'c' })).content,
      'fork\n',
      'the fork keeps its side',
    )
  })

  it('tasks written in a fork are seen only there until the fork merges', async () => {
    await using scratch = await makeScratch()
    await using workshop = await open(scratch, { approver: approve })
    await workshop.call('workspace_fork', { name: 't' })
    await workshop.call('workspace_use', { fork: 't' })
    assert.equal((await workshop.call('task_create', { title: 'fork task' })).type, 'success')
    await workshop.call('room_write', { fork: 't', files: [{ path: 'x.txt', content: 'x' }] })
    await workshop.call('workspace_use', { fork: 'main' })
    assert.doesNotMatch((await workshop.call('task_list', {})).content, /fork task/)
    assert.equal((await workshop.call('workspace_merge', { fork: 't' })).type, 'success')
    assert.match((await workshop.call('task_list', {})).content, /fork task/)
  })

  it('a merged fork says so when used, and is refused as a parent before a fork of it is made', async () => {
    await using scratch = await makeScratch()
    await using workshop = await open(scratch, { approver: approve })
    await workshop.call('workspace_fork', { name: 'done' })
    await workshop.call('room_write', { fork: 'done', files: [{ path: 'x.txt', content: 'x' }] })
    assert.equal((await workshop.call('workspace_merge', { fork: 'done' })).type, 'success')
    const used = await workshop.call('workspace_use', { fork: 'done' })
    assert.match(
      used.content,
      /^This session now works on done \(f-[0-9a-f]{8}\)\. It was merged, so it is read-only/,
    )
    const forked = await workshop.call('workspace_fork', { name: 'next' })
    assert.equal(forked.type === 'error' && forked.code, 'conflict')
    assert.match(
      forked.content,
      /^Fork done was merged into main and takes no more work; fork main instead/,
    )
    const listed = await workshop.call('workspace_list', {})
    assert.doesNotMatch(listed.content, /\(next\)/, listed.content)
  })
})

describe('isolate', () => {
  it('starts every session on a fresh fork of main: nothing reaches the folder until merged', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'v1\n' })
    await using workshop = await open(scratch, { isolate: true })
    assert.notEqual(workshop.lines.forks().length, 0)
    await workshop.call('write_file', { path: 'a.txt', content: 'agent\n' })
    await workshop.call('shell', { command: 'echo more >> a.txt' })
    assert.equal(await live(scratch, 'a.txt'), 'v1\n')
    const other = await workshop.openSession()
    assert.notEqual(other.lines.current, 'main')
    assert.notEqual(
      other.lines.current,
      (await workshop.openSession()).lines.current,
      'each session gets its own fork',
    )
  })
})

describe('the blob drive', () => {
  it('js_eval writes it through `drive`, and programs read it at /drive, read-only', async () => {
    await using scratch = await makeScratch()
    await using workshop = await open(scratch)
    const wrote = await workshop.call('js_eval', {
      code: "const a = await drive.write('notes/today.md', '# Today'); const b = await drive.write('copy.md', '# Today'); [a.id === b.id, (await drive.list('')).map((e) => e.type + ':' + e.name)]",
    })
    assert.equal(wrote.type, 'success', wrote.content)
    assert.match(wrote.content, /true/)
    assert.match(wrote.content, /folder:notes.*file:copy\.md/s)
    const read = await workshop.call('shell', {
      command: 'cat /drive/notes/today.md; echo x > /drive/new.txt',
    })
    assert.match(read.content, /^# Today\n/)
    assert.match(read.content, /Read-only file system/)
    const listed = await workshop.call('js_eval', { code: "(await drive.list('')).length" })
    assert.match(listed.content, /2/)
  })

  it('refuses drive changes under read-only access', async () => {
    await using scratch = await makeScratch()
    await using workshop = await open(scratch, { mode: 'plan' })
    const refused = await workshop.call('js_eval', { code: "await drive.write('x.txt', 'x')" })
    assert.equal(refused.type, 'error')
    assert.match(refused.content, /read-only/)
  })
})

describe('two sessions on one line', () => {
  it('never share a warm jail: what one leaves in /tmp the other’s commands never see', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'a\n' })
    await using workshop = await open(scratch)
    const sessions = [await workshop.openSession(), await workshop.openSession()] as const
    const shell = async (index: 0 | 1, command: string): Promise<string> => {
      const ran = await workshop.toolset.run(
        { name: 'shell', input: { command } },
        sessions[index].context(),
      )
      assert.equal(ran.type, 'success', ran.content)
      return ran.content
    }
    // A command runs cold until its session's warm jail is ready, then there, and /tmp (HOME)
    // outlives it: each session plants a file until one of its commands finds its own.
    const warmed = async (index: 0 | 1, mine: string, other: string): Promise<void> => {
      for (let tries = 0; tries < 50; tries++) {
        const seen = await shell(index, `ls /tmp; echo x > /tmp/${mine}`)
        assert.doesNotMatch(seen, new RegExp(other), `session ${index} never sees /tmp/${other}`)
        if (seen.startsWith(`${mine}\n`)) return
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      assert.fail(`session ${index}'s commands never shared a warm jail`)
    }
    // Positive control: the first session's commands share its warm jail's /tmp.
    await warmed(0, 'planted', 'other')
    await warmed(1, 'other', 'planted')
    await warmed(0, 'planted', 'other')
    for (const session of sessions) await session.close()
  })
})
