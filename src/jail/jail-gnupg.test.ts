/**
 * gpg in the jail reads no configuration a command can write. `git log` (which the command
 * policy runs without a person) verifies signatures with gpg when the repository sets
 * `log.showSignature`, and gpg obeys `$HOME/.gnupg/gpg.conf`: `auto-key-retrieve` with a
 * `dirmngr-program` runs that program for a key it lacks. gpg's home in the jail is one no
 * folder can stand at, whatever HOME is. Real bubblewrap, git and gpg.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { jailFixture } from './test-jail.ts'

const IDENTITY = ['-c', 'user.name=a', '-c', 'user.email=a@example.org']

/** A repository at `folder` whose HEAD is a commit signed with a key made for it and thrown away. */
async function signedRepository(folder: string): Promise<void> {
  const keys = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-gnupg-key-'))
  try {
    const env = { ...process.env, GNUPGHOME: keys }
    const gpg = (args: string[]) =>
      execFileSync('gpg', ['--batch', ...args], { env, stdio: 'pipe' })
    gpg(['--passphrase', '', '--quick-gen-key', 'k <k@example.org>', 'ed25519', 'sign', '1d'])
    const git = (args: string[], input?: string) =>
      execFileSync('git', args, { cwd: folder, input, env: process.env }).toString().trim()
    git(['init', '-q'])
    git([...IDENTITY, 'commit', '-q', '--allow-empty', '-m', 'first'])
    const tree = git(['rev-parse', 'HEAD^{tree}'])
    const header = `tree ${tree}\nauthor a <a@example.org> 0 +0000\ncommitter a <a@example.org> 0 +0000\n`
    const body = `${header}\nsigned\n`
    await fs.writeFile(path.join(keys, 'body'), body)
    const signature = gpg(['--armor', '--detach-sign', '-o', '-', path.join(keys, 'body')])
      .toString()
      .trimEnd()
      .split('\n')
      .map((line, index) => (index === 0 ? line : ` ${line}`))
      .join('\n')
    const commit = git(
      ['hash-object', '-t', 'commit', '-w', '--stdin'],
      `${header}gpgsig ${signature}\n\nsigned\n`,
    )
    git(['update-ref', 'HEAD', commit])
    git(['config', 'log.showSignature', 'true'])
  } finally {
    execFileSync('gpgconf', ['--kill', 'all'], { env: { ...process.env, GNUPGHOME: keys } })
    await fs.rm(keys, { recursive: true, force: true })
  }
}

describe('gpg in the jail', () => {
  it('obeys no gpg.conf a command wrote: git log on a signed commit runs no dirmngr-program', async (t) => {
    const { jail, workspace } = await jailFixture(t, {
      'evil.sh': '#!/bin/sh\ntouch /tmp/ran-dirmngr\nexit 1\n',
    })
    await fs.chmod(path.join(workspace, 'evil.sh'), 0o755)
    await signedRepository(workspace)
    // The programs' home is read-only (decision 0064); gpg's own must hold whatever HOME is,
    // so git runs here with a home a command wrote, as it did before that decision.
    const plant =
      'mkdir -p /tmp/.gnupg && chmod 700 /tmp/.gnupg && ' +
      `printf 'auto-key-retrieve\\ndirmngr-program /workspace/evil.sh\\n' > /tmp/.gnupg/gpg.conf`
    const run = await jail.run({
      command: ['bash', '-c', `${plant} && HOME=/tmp git log -1 2>&1; ls /tmp`],
      access: 'workspace-write',
    })
    assert.match(run.stdout, /^commit [0-9a-f]{40}/m, run.stdout + run.stderr)
    assert.match(run.stdout, /signed/, 'git log showed the commit')
    assert.doesNotMatch(run.stdout, /ran-dirmngr/, 'gpg ran the dirmngr-program gpg.conf named')
  })
})
