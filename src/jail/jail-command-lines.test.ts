/**
 * What a jailed program learns from the command lines it can read (/proc/N/cmdline, `ps`): with
 * its own PID namespace, PID 1 is bubblewrap's reaper, whose options name host paths (a warm
 * jail's PID 1 is its own Perl reaper, decision 0036). None may show: not the workspace's folder, not the state's, not a temporary or layer folder.
 */
import assert from 'node:assert/strict'
import os from 'node:os'
import { describe, it, type TestContext } from 'node:test'
import type { Jail } from './jail.ts'
import { assertJailAvailable, jailFixture } from './test-jail.ts'

const IS_ROOT = process.getuid?.() === 0

/** Every command line in the jail, one a line, NULs shown as spaces. */
const READ_COMMAND_LINES = `for f in /proc/[0-9]*/cmdline; do echo "$f: $(tr '\\0' ' ' < "$f")"; done`

/** Host paths a command line must not name. */
function hostPaths(base: string): string[] {
  return [base, os.tmpdir() + '/eitri-', '/tmp/eitri-']
}

function assertNoHostPath(output: string, base: string, what: string): void {
  // Positive control: the reaper is listed (PID 1: bubblewrap, or a warm jail's), so its line
  // was read.
  assert.match(output, /\/proc\/1\/cmdline: (\S*bwrap|\/opt\/eitri\/perl) /, `${what}: ${output}`)
  for (const hostPath of hostPaths(base)) {
    assert.ok(!output.includes(hostPath), `${what} shows ${hostPath}:\n${output}`)
  }
}

async function checkBoth(t: TestContext, jail: Jail, base: string): Promise<void> {
  await assertJailAvailable(jail)
  const warm = await jail.run({
    command: ['sh', '-c', READ_COMMAND_LINES],
    access: 'workspace-write',
    timeoutMs: 20_000,
  })
  assert.equal(warm.exitCode, 0, warm.stderr)
  assertNoHostPath(warm.stdout, base, 'a foreground command')
  for (const round of [1, 2]) {
    // The second job takes a jail started ahead where the jail starts them (overlays).
    const job = await jail.start({
      command: ['sh', '-c', READ_COMMAND_LINES],
      access: 'workspace-write',
    })
    const cold = await job.finished
    assert.equal(cold.exitCode, 0, cold.stderr)
    assertNoHostPath(cold.stdout, base, `background job ${round}`)
  }
  t.diagnostic('no host path in any command line')
}

describe("the jail's command lines", () => {
  it('name no host path, in the warm jail and in background jobs', async (t) => {
    const { jail, base } = await jailFixture(t, { 'a.txt': 'a\n' }, { privateInside: ['state'] })
    await checkBoth(t, jail, base)
  })

  it(
    'name no host path with overlay layers and jails started ahead',
    { skip: !IS_ROOT && 'overlays need root' },
    async (t) => {
      const { jail, base } = await jailFixture(
        t,
        { 'a.txt': 'a\n' },
        { layers: 'overlay', privateInside: ['state'] },
      )
      await checkBoth(t, jail, base)
    },
  )

  it(
    'show no host path of the workspace in the mount table, read-only or writable',
    { skip: !IS_ROOT && 'overlays need root' },
    async (t) => {
      const { jail, workspace } = await jailFixture(
        t,
        { 'a.txt': 'a\n' },
        { layers: 'overlay', privateInside: ['state'] },
      )
      await assertJailAvailable(jail)
      const command = ['cat', '/proc/self/mountinfo']
      for (const access of ['read-only', 'workspace-write'] as const) {
        const foreground = await jail.run({ command, access })
        const job = await (await jail.start({ command, access })).finished
        for (const [what, result] of Object.entries({ foreground, job })) {
          // Positive control: the workspace's line was read.
          assert.match(result.stdout, / \/workspace /, `${access} ${what}: ${result.stderr}`)
          assert.ok(
            !result.stdout.includes(workspace),
            `${access} ${what} shows ${workspace}:\n${result.stdout}`,
          )
        }
      }
    },
  )
})
