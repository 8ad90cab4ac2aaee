/**
 * `eitri serve --isolate` attacked through its own tools by one connection (bob) after another's
 * work (alice's), two real servers on one workspace and store, each driven by an MCP SDK client
 * whose person denies every question. The controls: alice reads her own fork, task and entry.
 * Found by the attack pass of 2026-12-03 (w/atkgit): bob's `knowledge_search` showed alice's
 * entry word for word as the snippet of his own hit (SQLite's FTS5 ignored the snippet's
 * `rowid = ?`, bound as a REAL). The rest held and is kept as regression: every door that names
 * a fork (also through `js_eval`'s `tools.call`), main under another spelling, alice's task by
 * its id, main's entries and tasks changed only in bob's fork.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { makeScratch, type Scratch } from './helpers/scratch.ts'
import { connectServe, type ServeToolCall } from './helpers/serve-client.ts'

/** A connection whose person denies every question; `args` after the scratch's flags. */
async function connect(
  scratch: Scratch,
  name: string,
  args: readonly string[],
): Promise<{ client: Client; call: ServeToolCall; prompts: string[] }> {
  const prompts: string[] = []
  const client = new Client({ name, version: '1.0.0' }, { capabilities: { elicitation: {} } })
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    prompts.push(request.params.message)
    return { action: 'accept', content: { decision: 'deny' } }
  })
  return { client, call: await connectServe(client, scratch, args), prompts }
}

const SECRET = 'hunter2-alice-only'

describe('--isolate: one connection reaches nothing of another’s, nor main, through any tool', () => {
  it('forks, files, tasks and knowledge of another connection; main by another name', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    // Main's own task and entry, made by the person's client first.
    const person = await connect(scratch, 'person', [])
    const mainTask = await person.call('task_create', { title: 'main task' })
    await person.call('knowledge_add', { title: 'Main notes', body: 'the main password policy' })
    await person.client.close()
    const alice = await connect(scratch, 'alice', ['--isolate'])
    const bob = await connect(scratch, 'bob', ['--isolate'])
    try {
      await alice.call('write_file', { path: 'secret.txt', content: `${SECRET}\n` })
      const aliceTask = await alice.call('task_create', {
        title: 'alice task',
        description: SECRET,
      })
      await alice.call('knowledge_add', {
        title: 'Deploy notes',
        body: `the staging password is ${SECRET}, rotate it monthly`,
      })
      const fork = /\* (f-[0-9a-f]{8})/.exec((await alice.call('workspace_list', {})).text)?.[1]
      assert.ok(fork !== undefined)
      // The controls: alice reaches her own work by the same doors.
      assert.equal(
        (await alice.call('room_read', { fork, path: 'secret.txt' })).text,
        `${SECRET}\n`,
      )

      // Bob's own entry holding a word of alice's: the snippet of his hit is his own text.
      await bob.call('knowledge_add', { title: 'Mine', body: 'my staging notes' })
      const searched = await bob.call('knowledge_search', { query: 'staging' })
      assert.equal(searched.text, '1. Mine\n   my «staging» notes')
      // The control: alice finds her entry by the same word.
      assert.match((await alice.call('knowledge_search', { query: 'staging' })).text, /hunter2/)

      const doors: [string, Record<string, unknown>][] = [
        ['room_read', { fork, path: 'secret.txt' }],
        ['room_files', { fork }],
        ['room_write', { fork, files: [{ path: 'b.txt', content: 'bob\n' }] }],
        ['workspace_use', { fork }],
        ['workspace_fork', { name: 'copy', from: fork }],
        ['workspace_diff', { fork }],
        ['workspace_review', { fork }],
        ['workspace_log', { fork }],
        ['workspace_merge', { fork }],
        ['workspace_discard', { fork }],
        ['task_update', { id: aliceTask.metadata['id'], status: 'completed' }],
        ['knowledge_links', { title: 'Deploy notes' }],
        ['room_write', { fork: 'Main', files: [{ path: 'b.txt', content: 'bob\n' }] }],
        ['room_write', { fork: 'MAIN', files: [{ path: 'b.txt', content: 'bob\n' }] }],
      ]
      for (const [tool, input] of doors) {
        const refused = await bob.call(tool, input)
        assert.deepEqual(
          [refused.isError, refused.code],
          [true, 'not_found'],
          `${tool}: ${refused.text}`,
        )
        assert.doesNotMatch(refused.text, /hunter2/)
        const evaluated = await bob.call('js_eval', {
          code: `(await tools.call(${JSON.stringify(tool)}, ${JSON.stringify(input)})).code`,
        })
        assert.match(evaluated.text, /not_found/, `tools.call ${tool}: ${evaluated.text}`)
      }
      // Main itself: switching asks the person, who says no.
      const used = await bob.call('workspace_use', { fork: 'main' })
      assert.equal(used.code, 'permission_denied', used.text)
      const written = await bob.call('room_write', {
        fork: 'main',
        files: [{ path: 'b.txt', content: 'bob\n' }],
      })
      assert.equal(written.code, 'permission_denied', written.text)
      assert.equal(bob.prompts.length, 2, bob.prompts.join('\n'))
      // Main's task and entry changed from bob's fork: in his fork only.
      await bob.call('task_update', { id: mainTask.metadata['id'], title: 'bob was here' })
      await bob.call('knowledge_add', { title: 'Main notes', body: 'bob replaced it' })
      for (const tool of ['task_list', 'shell']) {
        const listed = await bob.call(tool, tool === 'shell' ? { command: 'ls; cat a.txt' } : {})
        assert.doesNotMatch(listed.text, /alice|secret/, `${tool}: ${listed.text}`)
      }
      assert.match((await alice.call('task_list', {})).text, /main task/)
      assert.match(
        (await alice.call('knowledge_search', { query: 'policy' })).text,
        /the main password «policy»/,
      )
    } finally {
      await alice.client.close()
      await bob.client.close()
    }
    assert.deepEqual(fs.readdirSync(scratch.workspace).sort(), ['a.txt'])
    assert.equal(fs.readFileSync(path.join(scratch.workspace, 'a.txt'), 'utf8'), 'main\n')
  })
})

describe('--isolate: the workspace’s drive is reached as main is', () => {
  // Found by the attack pass of 2026-12-03 (w/atkjail2): an isolated connection wrote the
  // drive freely, so bob read (js_eval's drive, the jail's /drive) what alice kept there, and
  // overwrote and removed what alice and the person read from it.
  it('an isolated connection reads the drive, and changes it only with a person’s yes', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    const person = await connect(scratch, 'person', [])
    await person.call('js_eval', { code: `await drive.write('team/config.json', '{"ok":true}')` })
    await person.client.close()
    const alice = await connect(scratch, 'alice', ['--isolate'])
    try {
      const kept = await alice.call('js_eval', {
        code: `await drive.write('alice/deploy.txt', 'the staging password is ${SECRET}')`,
      })
      assert.match(kept.text, /permission_denied.*drive\.write refused.*isolated/s)
      const changes = [
        `await drive.write('team/config.json', '{"ok":false}')`,
        `await drive.remove('team/config.json')`,
        `await drive.mkdir('alice')`,
      ]
      for (const code of changes) {
        const refused = await alice.call('js_eval', { code })
        assert.match(refused.text, /permission_denied/, `${code}: ${refused.text}`)
      }
      assert.equal(alice.prompts.length, 1 + changes.length, alice.prompts.join('\n'))
      assert.match(alice.prompts[0] ?? '', /alice\/deploy\.txt/)
      // The control: reading it needs nobody, by js_eval and in the jail.
      const read = await alice.call('js_eval', { code: `await drive.read('team/config.json')` })
      assert.equal(read.text, '{"ok":true}')
      const shown = await alice.call('shell', { command: 'cat /drive/team/config.json' })
      assert.match(shown.text, /\{"ok":true\}/)
    } finally {
      await alice.client.close()
    }
    // A later connection finds the drive as the person left it.
    const bob = await connect(scratch, 'bob', ['--isolate'])
    try {
      const listed = await bob.call('js_eval', { code: `JSON.stringify(await drive.list())` })
      assert.equal(listed.text, '[{"type":"folder","name":"team"}]')
      const shell = await bob.call('shell', { command: 'find /drive -type f; cat /drive/team/*' })
      assert.doesNotMatch(shell.text, /hunter2|alice|false/)
    } finally {
      await bob.client.close()
    }
  })

  it('a person’s yes writes it', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    const prompts: string[] = []
    const client = new Client(
      { name: 'carol', version: '1.0.0' },
      { capabilities: { elicitation: {} } },
    )
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      prompts.push(request.params.message)
      return { action: 'accept', content: { decision: 'approve' } }
    })
    const call = await connectServe(client, scratch, ['--isolate'])
    try {
      const written = await call('js_eval', {
        code: `(await drive.write('notes.md', 'shared')).size`,
      })
      assert.equal(written.text, '6', written.text)
      assert.equal(prompts.length, 1)
      assert.match(prompts[0] ?? '', /notes\.md/)
    } finally {
      await client.close()
    }
  })
})
