/**
 * `allow` end to end: through `eitri serve` under `--approval untrusted`, with a person who
 * denies every question, a command the policy allows runs at once in the jail, and the write
 * comes back to the workspace. Each attack below was `allow` and did what the words hide (git
 * named `git-clean` removed the untracked files; a brace made `nice` run `touch`); now the
 * person is asked, says no, and nothing happens. The control is the same command without the
 * trick: it runs without a question.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { makeScratch, type Scratch } from './helpers/scratch.ts'
import { connectServe } from './helpers/serve-client.ts'

const GIT_ENV = {
  PATH: process.env['PATH'],
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
}

/** A repository with one commit, one uncommitted change and one untracked file. */
async function project(): Promise<Scratch> {
  const scratch = await makeScratch({ 'notes.txt': 'foo\n' })
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: scratch.workspace, env: GIT_ENV })
  git('init', '-q', '-b', 'main')
  git('add', 'notes.txt')
  git('-c', 'user.name=p', '-c', 'user.email=p@e', 'commit', '-q', '-m', 'first')
  await fs.writeFile(path.join(scratch.workspace, 'draft.txt'), 'not yet added\n')
  return scratch
}

const exists = (scratch: Scratch, name: string) =>
  fs.access(path.join(scratch.workspace, name)).then(
    () => true,
    () => false,
  )

/** `eitri serve --approval untrusted` with a client whose person denies every question. */
async function denyingServe(scratch: Awaited<ReturnType<typeof project>>) {
  const prompts: string[] = []
  const client = new Client(
    { name: 'allow-verdict-client', version: '1.0.0' },
    { capabilities: { elicitation: {} } },
  )
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    prompts.push(request.params.message)
    return { action: 'accept', content: { decision: 'deny' } }
  })
  return { client, prompts, call: await connectServe(client, scratch, ['--approval', 'untrusted']) }
}

describe('allow under --approval untrusted, through eitri serve', () => {
  it('asks the person before a command that runs another than it names', async () => {
    await using scratch = await project()
    const { client, prompts, call } = await denyingServe(scratch)
    try {
      // Controls: allowed, so they run with no question.
      const grep = await call('shell', { command: 'git grep -f .' })
      const nice = await call('shell', { command: 'nice -n 1 git log --oneline' })
      assert.match(nice.text, /first/)
      assert.equal(prompts.length, 0, `${grep.text}\n${prompts.join('\n')}`)
      assert.equal(await exists(scratch, 'draft.txt'), true)

      for (const command of [
        'exec -a git-clean git grep -f .',
        'nice -n {1,touch,pwned} git log',
      ]) {
        const refused = await call('shell', { command })
        assert.deepEqual([refused.isError, refused.code], [true, 'permission_denied'], command)
      }
      assert.equal(prompts.length, 2, prompts.join('\n'))
      assert.equal(await exists(scratch, 'draft.txt'), true, 'git clean ran')
      assert.equal(await exists(scratch, 'pwned'), false, 'touch ran')
    } finally {
      await client.close()
    }
  })

  it('asks before a redirection no simple command carries, xargs replacing a word, and an escape bash decodes to an option', async () => {
    await using scratch = await project()
    const { client, prompts, call } = await denyingServe(scratch)
    const notes = () => fs.readFile(path.join(scratch.workspace, 'notes.txt'), 'utf8')
    try {
      // Controls: the same shapes reading, not writing, run with no question.
      const read = await call('shell', { command: 'cat() { command cat; } < notes.txt; cat' })
      assert.match(read.text, /foo/)
      const substituted = await call('shell', { command: 'echo "[$(< notes.txt)]"' })
      assert.match(substituted.text, /\[foo\]/)
      const replaced = await call('shell', {
        command: 'echo --output=pwned | xargs -I Y -i git log --oneline Y',
      })
      assert.equal(prompts.length, 0, `${replaced.text}\n${prompts.join('\n')}`)

      for (const command of [
        'cat() { echo data; } > notes.txt; cat',
        'echo $(> notes.txt)',
        'echo --output=pwned | xargs -i -I Y git log Y',
        "git log $'\\455\\455output=pwned'",
      ]) {
        const refused = await call('shell', { command })
        assert.deepEqual([refused.isError, refused.code], [true, 'permission_denied'], command)
      }
      assert.equal(prompts.length, 4, prompts.join('\n'))
      assert.equal(await notes(), 'foo\n', 'notes.txt was overwritten')
      assert.equal(await exists(scratch, 'pwned'), false, 'git log wrote pwned')
    } finally {
      await client.close()
    }
  })

  it('refuses a substitution bash joins across a line continuation, or runs inside ${…}', async () => {
    await using scratch = await project()
    const { client, prompts, call } = await denyingServe(scratch)
    try {
      // Control: a continuation away from a `$` is text to both, and runs with no question.
      const control = await call('shell', { command: 'cat <<EOF\nfoo \\\nbar\nEOF' })
      assert.match(control.text, /foo bar/)
      // Bash deletes `\`+newline in an unquoted here-document, so `$\`+newline+`(…)` runs.
      for (const command of [
        'cat <<EOF\n$\\\n(touch pwned)\nEOF',
        'echo "$\\\n(touch pwned)"',
        // And a process substitution in the word of an unquoted ${…}, which bash runs.
        'cat ${x:-<(touch pwned)}',
        // And a body whose first line is a backslash, which the grammar took for the command's.
        "cat <<EOF\n\\\n'$(touch pwned)'\nEOF",
      ]) {
        const refused = await call('shell', { command })
        assert.deepEqual([refused.isError, refused.code], [true, 'permission_denied'], command)
      }
      assert.equal(prompts.length, 0, prompts.join('\n'))
      assert.equal(await exists(scratch, 'pwned'), false, 'touch ran')
    } finally {
      await client.close()
    }
  })
})
