/**
 * One rule for repository metadata at every door of a real workshop: file tools, js_eval's
 * fs, room_write, the jail's way back and merges from a fork all refuse what makes git run
 * code on the host, and all let local git work through.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import type { ApprovalDecision } from '../src/access/approval.ts'
import { openWorkshop } from '../src/workshop/workshop.ts'
import { sessionInFork } from './helpers/fork-session.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

const GIT_ENV = {
  PATH: process.env['PATH'],
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
}

/** A project with a repository whose configuration names a hooks folder. */
async function project(): Promise<Scratch> {
  const scratch = await makeScratch({
    'src/a.ts': 'export const a = 1\n',
    '.hooks/pre-commit': 'exit 0\n',
  })
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: scratch.workspace, env: GIT_ENV })
  git('init', '-q', '-b', 'main')
  git('config', 'core.hooksPath', '.hooks')
  git('-c', 'user.name=p', '-c', 'user.email=p@e', 'commit', '-q', '--allow-empty', '-m', 'first')
  return scratch
}

const approve = async (): Promise<ApprovalDecision> => ({ type: 'approved', by: 'tester' })
const live = (scratch: Scratch, name: string) =>
  fs.readFile(path.join(scratch.workspace, name), 'utf8').catch(() => undefined)

describe('repository metadata at every door of a workshop', () => {
  const attacks: [string, string][] = [
    ['.git/commondir', '../evil\n'],
    ['.git/config', '[core]\n\tfsmonitor = touch /tmp/x\n'],
    ['nested/.git/HEAD', 'ref: refs/heads/main\n'],
    ['.hooks/pre-commit', 'touch /tmp/x\n'],
  ]

  it('write_file, js_eval fs and room_write refuse the same paths, and write what git work needs', async () => {
    await using scratch = await project()
    await using workshop = await openWorkshop(scratch.workshopOptions)
    for (const [target, content] of attacks) {
      const tool = await workshop.call('write_file', { path: target, content })
      assert.equal(tool.type === 'error' && tool.code, 'protected_path', `write_file ${target}`)
      const viaEval = await workshop.call('js_eval', {
        code: `await fs.writeFile(${JSON.stringify(target)}, ${JSON.stringify(content)})`,
      })
      assert.equal(viaEval.type, 'error', `js_eval ${target}: ${viaEval.content}`)
      assert.match(viaEval.content, /protected/)
      const room = await workshop.call('room_write', {
        fork: 'main',
        files: [{ path: target, content }],
      })
      assert.equal(room.type, 'error', `room_write ${target}: ${room.content}`)
    }
    assert.equal(await live(scratch, '.hooks/pre-commit'), 'exit 0\n')
    assert.equal(await live(scratch, '.git/commondir'), undefined)
    // room_write judges every path first: one refused path leaves the others unwritten too.
    const several = await workshop.call('room_write', {
      fork: 'main',
      files: [
        { path: 'first.md', content: 'x\n' },
        { path: '.hooks/pre-commit', content: 'touch /tmp/x\n' },
      ],
    })
    assert.equal(several.type, 'error', several.content)
    assert.equal(await live(scratch, 'first.md'), undefined)
    // Positive control: what local git work writes goes through every door.
    const head = execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: scratch.workspace,
      env: GIT_ENV,
    })
      .toString()
      .trim()
    const ref = await workshop.call('write_file', {
      path: '.git/refs/heads/by-a-tool',
      content: `${head}\n`,
    })
    assert.equal(ref.type, 'success', ref.content)
    assert.equal(
      execFileSync('git', ['rev-parse', 'by-a-tool'], { cwd: scratch.workspace, env: GIT_ENV })
        .toString()
        .trim(),
      head,
    )
  })

  it('a merge from a fork is judged by main’s repositories: the hooks path named in main’s .git/config', async () => {
    await using scratch = await project()
    await using opened = await sessionInFork(scratch, 'hooks')
    const { workshop, call } = opened
    // The fork holds no .git, so its own view cannot know main's hooks path; the merge must.
    const planted = await call('write_file', {
      path: '.hooks/pre-commit',
      content: 'touch /tmp/pwned\n',
    })
    assert.equal(planted.type, 'error', 'the fork refuses it too: it reads main’s configuration')
    // A person's merge (CLI) of a fork whose tree has the hook anyway (written by the history).
    const info = workshop.lines.find('hooks')
    assert.notEqual(info, 'main')
    const tree = await workshop.lines.tree('hooks')
    await tree.writeFileAtomic('.hooks/pre-commit', Buffer.from('touch /tmp/pwned\n'))
    await tree.writeFileAtomic('src/b.ts', Buffer.from('export const b = 2\n'))
    const merged = await call('workspace_merge', { fork: 'hooks' })
    assert.equal(merged.type, 'error', merged.content)
    assert.match(merged.content, /\.hooks\/pre-commit: .*core\.hookspath/)
    assert.equal(await live(scratch, '.hooks/pre-commit'), 'exit 0\n')
    assert.equal(await live(scratch, 'src/b.ts'), undefined, 'nothing was merged')
    // Positive control: without the hook, the same merge goes through.
    await tree.writeFileAtomic('.hooks/pre-commit', Buffer.from('exit 0\n'))
    const clean = await call('workspace_merge', { fork: 'hooks' })
    assert.equal(clean.type, 'success', clean.content)
    assert.equal(await live(scratch, 'src/b.ts'), 'export const b = 2\n')
  })

  it('merges between forks are judged too: a repository assembled from parts written in two forks', async () => {
    await using scratch = await project()
    await using workshop = await openWorkshop({
      ...scratch.workshopOptions,
      approver: approve,
    })
    const ok = (result: { type: string; content: string }) =>
      assert.equal(result.type, 'success', result.content)
    ok(await workshop.call('workspace_fork', { name: 'p' }))
    ok(
      await workshop.call('room_write', {
        fork: 'p',
        files: [{ path: 'src/refs/heads/main', content: 'x\n' }],
      }),
    )
    ok(await workshop.call('workspace_fork', { name: 'a', from: 'p' }))
    ok(await workshop.call('workspace_fork', { name: 'b', from: 'p' }))
    ok(
      await workshop.call('room_write', {
        fork: 'a',
        files: [{ path: 'src/HEAD', content: 'ref: refs/heads/main\n' }],
      }),
    )
    ok(
      await workshop.call('room_write', {
        fork: 'b',
        files: [{ path: 'src/objects/info/alternates', content: '../../.git/objects\n' }],
      }),
    )
    ok(await workshop.call('workspace_merge', { fork: 'a' }))
    const merged = await workshop.call('workspace_merge', { fork: 'b' })
    assert.equal(merged.type, 'error', merged.content)
    assert.match(merged.content, /src: a repository/)
    const pFiles = await workshop.call('room_files', { fork: 'p' })
    assert.doesNotMatch(pFiles.content, /alternates/, 'nothing of b reached p')
  })

  it('room_write is all or nothing: a repository put together in one batch writes none of it, on main and in a fork', async () => {
    await using scratch = await project()
    await using workshop = await openWorkshop({
      ...scratch.workshopOptions,
      approver: approve,
    })
    const parts = [
      { path: 'r/config', content: '[core]\n\tpager = touch /tmp/x\n' },
      { path: 'r/objects/a', content: 'x\n' },
      { path: 'r/refs/a', content: 'x\n' },
      { path: 'r/HEAD', content: 'ref: refs/heads/main\n' },
    ]
    assert.equal((await workshop.call('workspace_fork', { name: 'f' })).type, 'success')
    for (const fork of ['main', 'f']) {
      // HEAD last, and HEAD first: the order does not decide.
      for (const files of [parts, [...parts].reverse()]) {
        const refused = await workshop.call('room_write', { fork, files })
        assert.equal(refused.type === 'error' && refused.code, 'protected_path', refused.content)
        assert.match(refused.content, /r\/(HEAD|config)\b.*a repository/)
        assert.match(refused.content, /nothing of this batch was written/)
        const listed = await workshop.call('room_files', { fork })
        assert.doesNotMatch(listed.content, /r\//, `${fork}: ${listed.content}`)
      }
    }
    await assert.rejects(fs.stat(path.join(scratch.workspace, 'r')), /ENOENT/)
  })

  it('room_write puts back what it wrote when a write fails midway', async () => {
    await using scratch = await project()
    await using workshop = await openWorkshop(scratch.workshopOptions)
    // The third write fails (a file where its folder should be), after two went in.
    const failed = await workshop.call('room_write', {
      files: [
        { path: 'new/deep/b.ts', content: 'b\n' },
        { path: 'src/a.ts', content: 'changed\n' },
        { path: 'src/a.ts/c.ts', content: 'c\n' },
      ],
    })
    assert.equal(failed.type, 'error', failed.content)
    assert.equal(await live(scratch, 'src/a.ts'), 'export const a = 1\n')
    await assert.rejects(fs.stat(path.join(scratch.workspace, 'new')), /ENOENT/)
  })

  it('a restore is judged like any door: it never writes what the configuration names as code now', async () => {
    await using scratch = await project()
    await using workshop = await openWorkshop({
      ...scratch.workshopOptions,
      approver: approve,
    })
    const evil = await workshop.call('write_file', {
      path: 'tools2/hooks/pre-commit',
      content: 'touch /tmp/x\n',
    })
    assert.equal(evil.type, 'success', evil.content)
    await workshop.call('write_file', { path: 'tools2/hooks/pre-commit', content: 'exit 0\n' })
    const snapshots = (await workshop.lines.snapshots.list()).filter(
      (record) => record.kind === 'after',
    )
    const evilAfter = snapshots.at(-1)
    assert.ok(evilAfter)
    execFileSync('git', ['config', 'core.hooksPath', 'tools2/hooks'], {
      cwd: scratch.workspace,
      env: GIT_ENV,
    })
    const restored = await workshop.lines.restore(evilAfter.id, { force: true })
    assert.equal(restored.type, 'protected', JSON.stringify(restored))
    assert.equal(await live(scratch, 'tools2/hooks/pre-commit'), 'exit 0\n')
    // The positive control: once the configuration no longer names it, the same restore goes through.
    execFileSync('git', ['config', '--unset', 'core.hooksPath'], {
      cwd: scratch.workspace,
      env: GIT_ENV,
    })
    const again = await workshop.lines.restore(evilAfter.id, { force: true })
    assert.equal(again.type, 'restored', JSON.stringify(again))
  })

  it('shell: a nested repository made by a test suite works in the jail, is reported once, and stays there', async () => {
    await using scratch = await project()
    await using workshop = await openWorkshop(scratch.workshopOptions)
    const ran = await workshop.call('shell', {
      command:
        'git init -q fixture && cd fixture && git commit -q --allow-empty -m t && git log --format=%s && cd .. && echo made > notes.txt',
    })
    assert.equal(ran.type, 'success', ran.content)
    assert.match(ran.content, /^t\n/)
    assert.equal(ran.content.match(/\[kept in the jail: fixture\/\.git: /g)?.length, 1, ran.content)
    assert.doesNotMatch(ran.content, /\[not written back:/)
    assert.equal(await live(scratch, 'notes.txt'), 'made\n')
    await assert.rejects(fs.access(path.join(scratch.workspace, 'fixture/.git')))
  })
})
