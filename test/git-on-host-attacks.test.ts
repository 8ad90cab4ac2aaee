/**
 * The git eitri runs on the host never runs a program the workspace names (jail-attack-classes
 * §31), end to end through `eitri serve` with an SDK client whose person approves everything.
 * The user's repository names programs in its own `.git/config` and hooks (an fsmonitor, a
 * clean filter, a textconv and a merge driver, a `reference-transaction` hook): the person set
 * them, so the tools cannot take them away, and the model names the drivers for every file in
 * a `.gitattributes` it writes. Then every host git of eitri runs on that folder: main's
 * snapshots (`git add` on the work tree), a fork's diff, review and three-way merge, and a
 * restore that moves the user's branch back (`git update-ref` in the user's `.git`). None of
 * the programs runs. The control: plain git in the same folder, as the person would run it,
 * runs each of them. The markers live outside the workspace (the jail cannot write there), and
 * each holds the id and host name of what wrote it.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { GIT_TEST_ENV } from './helpers/git-repository.ts'
import { makeProjectFixture } from './helpers/project-fixture.ts'
import { makeScratch } from './helpers/scratch.ts'
import { connectServe } from './helpers/serve-client.ts'

/** A program that leaves `markers/NAME` (the effective uid), then does what git needs of it. */
function marker(markers: string, name: string, then: string): string {
  return `sh -c 'id -u >> ${markers}/${name}; ${then}' --`
}

/** The person's own settings: each names a program that leaves a marker when it runs. */
function personsConfig(markers: string): string {
  const program = (name: string, then: string) => JSON.stringify(marker(markers, name, then))
  return [
    '[core]',
    `\tfsmonitor = ${program('fsmonitor', 'exit 1')}`,
    '[filter "pwn"]',
    `\tclean = ${program('clean', 'cat')}`,
    `\tsmudge = ${program('smudge', 'cat')}`,
    '[diff "pwn"]',
    `\ttextconv = ${program('textconv', 'cat "$1"')}`,
    '[merge "pwn"]',
    `\tdriver = ${program('merge-driver', 'exit 0')}`,
    '',
  ].join('\n')
}

const ran = (markers: string): string[] => fs.readdirSync(markers).sort()

describe("eitri's git on the host runs no program the workspace names", () => {
  it('snapshots, a fork’s diff, review and merge, and a restore of the branch: none; plain git: each', async () => {
    await using scratch = await makeScratch()
    makeProjectFixture(scratch.workspace, { fillerPackages: 100 })
    const markers = path.join(scratch.root, 'markers')
    fs.mkdirSync(markers)
    const gitDir = path.join(scratch.workspace, '.git')
    fs.appendFileSync(path.join(gitDir, 'config'), personsConfig(markers))
    const hook = path.join(gitDir, 'hooks', 'reference-transaction')
    fs.writeFileSync(
      hook,
      `#!/bin/sh\n${marker(markers, 'reference-transaction', 'cat >/dev/null')}\n`,
    )
    fs.chmodSync(hook, 0o755)
    const mainBranch = () => fs.readFileSync(path.join(gitDir, 'refs/heads/main'), 'utf8').trim()
    const first = mainBranch()

    const client = new Client(
      { name: 'git-on-host-attacker', version: '1.0.0' },
      { capabilities: { elicitation: {} } },
    )
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: 'accept',
      content: { decision: 'approve' },
    }))
    const call = await connectServe(client, scratch)
    try {
      const ok = async (tool: string, input: Record<string, unknown>) => {
        const result = await call(tool, input)
        assert.equal(result.isError, false, `${tool}: ${result.text}`)
        return result
      }
      // The drivers named for every file, a change on main, and a commit that moves the branch.
      await ok('write_file', {
        path: '.gitattributes',
        content: '* filter=pwn diff=pwn merge=pwn\n',
      })
      await ok('edit_file', { path: 'src/sum.js', old_string: 'total', new_string: 'sumAll' })
      const committed = await ok('shell', {
        command: 'git add -A && git commit -qm "agent commit" && git rev-parse HEAD',
      })
      assert.notEqual(mainBranch(), first, committed.text)
      // A fork that changes the same file as main does after it: a three-way merge of content.
      await ok('workspace_fork', { name: 'f' })
      await ok('room_write', {
        fork: 'f',
        files: [{ path: 'README.md', content: 'from the fork\n' }],
      })
      await ok('write_file', { path: 'wasm/notes.txt', content: 'main meanwhile\n' })
      await ok('workspace_diff', { fork: 'f' })
      await ok('workspace_review', { fork: 'f' })
      const merged = await ok('workspace_merge', { fork: 'f' })
      assert.match(merged.text, /Merged f into main/)
      // Back to before the agent's first call: files, and the branch the commit moved.
      const snapshots = await ok('workspace_snapshots', { limit: 100 })
      const oldest = [...snapshots.text.matchAll(/^#(\d+)/gm)].map((found) => Number(found[1]))
      const restored = await ok('workspace_restore', {
        snapshot: String(Math.min(...oldest)),
        force: true,
      })
      assert.equal(mainBranch(), first, restored.text)
    } finally {
      await client.close()
    }
    assert.deepEqual(ran(markers), [], 'a program the workspace names ran on the host')

    // The control: the same attributes (the restore took them away) and the person's plain git
    // in the same folder, which runs every one of the programs.
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: scratch.workspace, env: GIT_TEST_ENV, stdio: 'pipe' })
    const write = (name: string, content: string) =>
      fs.writeFileSync(path.join(scratch.workspace, name), content)
    write('.gitattributes', '* filter=pwn diff=pwn merge=pwn\n')
    git('add', '.gitattributes')
    git('commit', '-qm', 'attributes')
    write('src/sum.js', 'export const person = 1\n')
    git('status', '--porcelain')
    git('add', '-A')
    git('diff', '--cached', '-p')
    git('commit', '-qm', 'person')
    git('checkout', '-q', '-b', 'side', 'HEAD~1')
    write('src/sum.js', 'export const side = 1\n')
    git('commit', '-qam', 'side')
    // Whether git calls the result a conflict is not what counts here: the driver ran.
    try {
      git('merge', '-q', '--no-edit', 'main')
    } catch {
      // a conflict
    }
    assert.deepEqual(ran(markers), [
      'clean',
      'fsmonitor',
      'merge-driver',
      'reference-transaction',
      'smudge',
      'textconv',
    ])
    const uid = String(process.getuid?.())
    assert.equal(fs.readFileSync(path.join(markers, 'clean'), 'utf8').split('\n')[0], uid)
  })
})
