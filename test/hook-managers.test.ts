/**
 * Git-hook managers at every door: what husky, pre-commit, lefthook and a `.githooks` folder
 * run at a person's next `git commit` is refused to file tools (in a workshop and over MCP),
 * never comes back from a shell command on main, never reaches main from a fork, and is never
 * written by a restore; writable only through an allow rule the person writes.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { openWorkshop } from '../src/workshop/workshop.ts'
import { sessionInFork } from './helpers/fork-session.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'
import { connectServe } from './helpers/serve-client.ts'

const GIT_ENV = {
  PATH: process.env['PATH'],
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
}

/** husky 9's stub: the hooks path is `<dir>/_`, and its stubs run `<dir>/<hook>`. */
const HUSKY_STUB =
  '#!/bin/sh\ns="$(dirname "$(dirname "$0")")/$(basename "$0")"\n[ -f "$s" ] || exit 0\nexec sh "$s"\n'

/** A project installed with husky 9 in `tools/hooks` (`core.hooksPath = tools/hooks/_`). */
async function project(): Promise<Scratch> {
  const scratch = await makeScratch({
    'src/a.ts': 'export const a = 1\n',
    'tools/hooks/_/pre-commit': HUSKY_STUB,
    'lefthook.yml': 'pre-commit:\n  commands: {}\n',
  })
  await fs.chmod(path.join(scratch.workspace, 'tools/hooks/_/pre-commit'), 0o755)
  git(scratch, 'init', '-q', '-b', 'main')
  git(scratch, 'config', 'core.hooksPath', 'tools/hooks/_')
  git(scratch, 'add', 'src/a.ts')
  commit(scratch, 'first')
  return scratch
}

function git(scratch: Scratch, ...args: string[]): string {
  return execFileSync('git', args, { cwd: scratch.workspace, env: GIT_ENV }).toString()
}

function commit(scratch: Scratch, message: string): void {
  git(
    scratch,
    '-c',
    'user.name=p',
    '-c',
    'user.email=p@e',
    'commit',
    '-q',
    '--allow-empty',
    '-m',
    message,
  )
}

const live = (scratch: Scratch, name: string) =>
  fs.readFile(path.join(scratch.workspace, name), 'utf8').catch(() => undefined)

/** What hook managers run, at any depth of the workspace. */
const HOOK_FILES = [
  'tools/hooks/pre-commit',
  '.husky/pre-commit',
  '.githooks/pre-push',
  '.pre-commit-config.yaml',
  'lefthook.yml',
  '.lefthook.yaml',
  'lefthook-local.yml',
  '.config/lefthook.toml',
  '.lefthook/pre-commit/lint.sh',
  'packages/web/.husky/pre-commit',
]

describe('git-hook managers at every door', () => {
  it('git runs what a hook manager names (positive control), and no file tool may write it', async () => {
    await using scratch = await project()
    // Written directly (not by eitri), husky's script runs at the next commit.
    const marker = path.join(scratch.root, 'hook-ran')
    await fs.writeFile(path.join(scratch.workspace, 'tools/hooks/pre-commit'), `touch ${marker}\n`)
    commit(scratch, 'second')
    await fs.access(marker)
    await fs.rm(path.join(scratch.workspace, 'tools/hooks/pre-commit'))
    await using workshop = await openWorkshop(scratch.workshopOptions)
    for (const target of HOOK_FILES) {
      const tool = await workshop.call('write_file', { path: target, content: 'touch /tmp/x\n' })
      assert.equal(tool.type === 'error' && tool.code, 'protected_path', `write_file ${target}`)
      const room = await workshop.call('room_write', {
        fork: 'main',
        files: [{ path: target, content: 'touch /tmp/x\n' }],
      })
      assert.equal(room.type, 'error', `room_write ${target}: ${room.content}`)
      assert.equal(
        await live(scratch, target),
        target === 'lefthook.yml' ? 'pre-commit:\n  commands: {}\n' : undefined,
      )
    }
    const edit = await workshop.call('edit_file', {
      path: 'lefthook.yml',
      old_string: 'commands: {}',
      new_string: 'commands: {x: {run: "touch /tmp/x"}}',
    })
    assert.equal(edit.type === 'error' && edit.code, 'protected_path', edit.content)
    // Positive control: an ordinary path beside them is written.
    const ordinary = await workshop.call('write_file', { path: 'tools/notes.md', content: 'x\n' })
    assert.equal(ordinary.type, 'success', ordinary.content)
  })

  it('over MCP: refused, and written once the person allows that one path in the configuration', async () => {
    await using scratch = await project()
    const refusedClient = new Client({ name: 'hooks-test', version: '1.0.0' })
    try {
      const call = await connectServe(refusedClient, scratch)
      const refused = await call('write_file', { path: '.husky/pre-commit', content: 'x\n' })
      assert.deepEqual([refused.isError, refused.code], [true, 'protected_path'], refused.text)
      assert.match(refused.text, /\.husky\/\*\*/)
      const ordinary = await call('write_file', { path: 'husky-notes.md', content: 'x\n' })
      assert.equal(ordinary.isError, false, ordinary.text)
    } finally {
      await refusedClient.close()
    }
    assert.equal(await live(scratch, '.husky/pre-commit'), undefined)
    // The escape hatch: an allow rule naming the path.
    await fs.writeFile(
      scratch.configPath,
      JSON.stringify({
        rules: { allow: [{ rule: 'write_file(.husky/pre-commit)', approval: 'none' }] },
      }),
    )
    const allowedClient = new Client({ name: 'hooks-test', version: '1.0.0' })
    try {
      const call = await connectServe(allowedClient, scratch)
      const allowed = await call('write_file', { path: '.husky/pre-commit', content: 'exit 0\n' })
      assert.equal(allowed.isError, false, allowed.text)
    } finally {
      await allowedClient.close()
    }
    assert.equal(await live(scratch, '.husky/pre-commit'), 'exit 0\n')
  })

  it('a shell command on main writes them in the jail, and none comes back', async () => {
    await using scratch = await project()
    await using workshop = await openWorkshop(scratch.workshopOptions)
    const writes = HOOK_FILES.map(
      (file) => `mkdir -p $(dirname ${file}) && echo 'touch /tmp/x' > ${file}`,
    )
    const ran = await workshop.call('shell', {
      command: `${writes.join(' && ')} && echo ok > ordinary.txt && cat lefthook.yml`,
    })
    assert.equal(ran.type, 'success', ran.content)
    assert.match(ran.content, /^touch \/tmp\/x\n/, 'in the jail they are ordinary files')
    for (const file of HOOK_FILES) {
      assert.match(ran.content, new RegExp(`${file.replace(/\./g, '\\.')}`), `reported: ${file}`)
      const expected = file === 'lefthook.yml' ? 'pre-commit:\n  commands: {}\n' : undefined
      assert.equal(await live(scratch, file), expected, file)
    }
    assert.equal(await live(scratch, 'ordinary.txt'), 'ok\n')
  })

  it('a fork keeps none of them, and its merge never carries one into main', async () => {
    await using scratch = await project()
    await using opened = await sessionInFork(scratch, 'hooks')
    const { workshop, call } = opened
    const ran = await call('shell', {
      command: "mkdir -p .husky && echo 'touch /tmp/x' > .husky/pre-commit && echo b > b.txt",
    })
    assert.equal(ran.type, 'success', ran.content)
    const tree = await workshop.lines.tree('hooks')
    assert.equal(await tree.readFile('.husky/pre-commit').catch(() => undefined), undefined)
    // A fork's tree holding one anyway (planted below the tools): its merge is refused whole.
    await tree.writeFileAtomic('.githooks/pre-commit', Buffer.from('touch /tmp/pwned\n'))
    const merged = await call('workspace_merge', { fork: 'hooks' })
    assert.equal(merged.type, 'error', merged.content)
    assert.match(merged.content, /\.githooks\/pre-commit/)
    assert.equal(await live(scratch, '.githooks/pre-commit'), undefined)
    assert.equal(await live(scratch, 'b.txt'), undefined, 'nothing was merged')
    // Positive control: without it, the same merge goes through.
    await tree.remove('.githooks/pre-commit')
    const clean = await call('workspace_merge', { fork: 'hooks' })
    assert.equal(clean.type, 'success', clean.content)
    assert.equal(await live(scratch, 'b.txt'), 'b\n')
  })

  it('a restore never writes them back', async () => {
    await using scratch = await project()
    await using workshop = await openWorkshop(scratch.workshopOptions)
    const wrote = await workshop.call('write_file', { path: 'src/b.ts', content: 'b\n' })
    assert.equal(wrote.type, 'success', wrote.content)
    const after = (await workshop.lines.snapshots.list()).filter((r) => r.kind === 'after').at(-1)
    assert.ok(after)
    // The person changes lefthook's configuration; restoring the snapshot would put it back.
    await fs.writeFile(path.join(scratch.workspace, 'lefthook.yml'), 'pre-push:\n  commands: {}\n')
    const restored = await workshop.lines.restore(after.id, { force: true })
    assert.equal(restored.type, 'protected', JSON.stringify(restored))
    assert.equal(await live(scratch, 'lefthook.yml'), 'pre-push:\n  commands: {}\n')
    // Positive control: with lefthook.yml as it was, the restore has nothing protected to write.
    await fs.writeFile(
      path.join(scratch.workspace, 'lefthook.yml'),
      'pre-commit:\n  commands: {}\n',
    )
    await fs.writeFile(path.join(scratch.workspace, 'src/b.ts'), 'changed\n')
    const again = await workshop.lines.restore(after.id, { force: true })
    assert.equal(again.type, 'restored', JSON.stringify(again))
    assert.equal(await live(scratch, 'src/b.ts'), 'b\n')
  })
})
