/**
 * Code read by another shell than bash, or by bash in another mode, tried for real: each attack
 * runs `touch pwned` there and not in plain bash, which is what the policy reads.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { CommandPolicy } from './command-policy.ts'
import { runQuietly } from '../../../test/helpers/run-quietly.ts'

describe('shells other than bash, and bash in other modes', () => {
  let policy: CommandPolicy
  let scratch: string
  before(async () => {
    policy = await CommandPolicy.load()
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-shell-dialects-'))
  })
  after(async () => {
    policy.close()
    await fs.rm(scratch, { recursive: true, force: true })
  })

  let count = 0
  /** Runs `program args…` in a new folder; whether `pwned` appeared. */
  async function pwned(program: string, args: readonly string[]): Promise<boolean> {
    count += 1
    const dir = path.join(scratch, String(count))
    await fs.mkdir(dir)
    await runQuietly(program, args, { cwd: dir, env: process.env })
    return fs.access(path.join(dir, 'pwned')).then(
      () => true,
      () => false,
    )
  }

  const quote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`

  it('asks before sh runs code it reads otherwise than bash; plain sh code stays as it was', async () => {
    // dash ends `$'\'` after the backslash; bash reads a string up to the last quote.
    const code = "echo $'\\'\ntouch pwned\n'"
    assert.equal(await pwned('/bin/sh', ['-c', code]), true, 'sh did not run touch')
    assert.equal(await pwned('/bin/bash', ['-c', code]), false, 'bash ran touch')
    const judged = policy.judge(`sh -c ${quote(code)}`)
    assert.equal(judged.verdict, 'ask', judged.reason)
    assert.equal(policy.judge(`bash -c ${quote(code)}`).verdict, 'jail')
    for (const plain of ["sh -c 'npm test 2>&1 | tail -n 20'", 'sh -c "cd src && ls -la"'])
      assert.equal(policy.judge(plain).verdict, 'jail', plain)
    for (const other of ["sh -c 'cat <<< x'", "zsh -c 'ls'", "sh -c 'alias l=ls'"])
      assert.equal(policy.judge(other).verdict, 'ask', other)
  })

  it('refuses code bash reads with aliases, extended globs or in POSIX mode', async () => {
    // With expand_aliases, `cat #` turns the here-document into a comment and its body into
    // commands; without, the body is only text.
    const code = "alias cat='cat #'\ncat <<X\ntouch pwned\nX"
    assert.equal(await pwned('/bin/bash', ['-O', 'expand_aliases', '-c', code]), true)
    assert.equal(await pwned('/bin/bash', ['-c', code]), false)
    const judged = policy.judge(`bash -O expand_aliases -c ${quote(code)}`)
    assert.equal(judged.verdict, 'deny', judged.reason)
    assert.equal(judged.rule, 'ambiguous-syntax', judged.reason)
    assert.equal(policy.judge(`bash -c ${quote(code)}`).verdict, 'jail')

    const refused = [
      `shopt -s expand_aliases\n${code}`,
      'shopt -s extglob; ls',
      'bash -O extglob -c ls',
      'bash --posix -c ls',
      'bash -o posix -c ls',
      'set -o posix; ls',
      'POSIXLY_CORRECT=1; ls',
      'POSIXLY_CORRECT=1 bash -c ls',
      'env BASHOPTS=extglob bash -c ls',
      'shopt -s "$opt"',
    ]
    for (const source of refused) {
      const verdict = policy.judge(source)
      assert.equal(verdict.verdict, 'deny', `${source}: ${verdict.reason}`)
      assert.equal(verdict.rule, 'ambiguous-syntax', `${source}: ${verdict.reason}`)
    }
    for (const source of [
      'set -euo pipefail; ls',
      'set -o | grep posix',
      'shopt -s nullglob globstar; ls',
      'shopt -u extglob',
    ])
      assert.equal(policy.judge(source).verdict, 'allow', source)
    assert.equal(policy.judge('POSIXLY_CORRECT=1 ls').verdict, 'jail')
  })

  it('refuses a default expansion that sets such a variable: ${POSIXLY_CORRECT:=1}', async () => {
    // `${NAME:=word}` sets NAME as `NAME=word` does: POSIX mode expands aliases even in a
    // script, so the policy saw a program `c` where bash ran `touch pwned`.
    const code = ": ${POSIXLY_CORRECT:=1}\nalias c='touch pwned'\nc"
    assert.equal(await pwned('/bin/bash', ['-c', code]), true, 'bash did not run touch')
    const control = "alias c='touch pwned'\nc"
    assert.equal(await pwned('/bin/bash', ['-c', control]), false, 'bash ran touch')
    for (const source of [code, 'echo "${BASH_COMPAT=31}"; ls', 'ls ${x:+${POSIXLY_CORRECT=y}}']) {
      const judged = policy.judge(source)
      assert.equal(judged.verdict, 'deny', `${source}: ${judged.reason}`)
      assert.equal(judged.rule, 'ambiguous-syntax', `${source}: ${judged.reason}`)
    }
    assert.equal(policy.judge(control).verdict, 'jail')
    // The others set what a program obeys: not `allow`. A lowercase name stays harmless.
    for (const source of ['echo ${GIT_EXTERNAL_DIFF:=x}', ': ${PS4=x}', 'cat ${A[1]:=x}'])
      assert.equal(policy.judge(source).verdict, 'jail', source)
    for (const source of ['cat ${f:=notes.txt}', 'echo ${x:-default}', 'echo "${y=1}"'])
      assert.equal(policy.judge(source).verdict, 'allow', source)
  })
})
