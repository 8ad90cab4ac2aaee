/**
 * Inputs to the workspace tools that once did something other than what they said, through a
 * real `eitri serve` and MCP client: a fork name shaped like another fork's id (the doors look
 * ids up first, so the name led to the other fork), and one room_write naming a file twice
 * (only the last content landed, silently), and names with a newline or another control
 * character, which let one file pass for others in a diff or a merge's question. Each with its
 * harmless variant.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { makeScratch, type Scratch } from './helpers/scratch.ts'
import { connectServe } from './helpers/serve-client.ts'

async function connect(scratch: Scratch) {
  const client = new Client({ name: 'inputs-test', version: '1' })
  return { client, call: await connectServe(client, scratch) }
}

describe('workspace tool inputs', () => {
  it('refuses a fork name shaped like a fork id; other names reach their own fork', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    const { client, call } = await connect(scratch)
    try {
      const first = await call('workspace_fork', { name: 'first' })
      assert.equal(first.isError, false, first.text)
      const firstId = String(first.metadata['fork'])
      await call('room_write', { fork: 'first', files: [{ path: 'a.txt', content: 'first\n' }] })
      // The attack: a second fork named with the first's id.
      const named = await call('workspace_fork', { name: firstId })
      assert.equal(named.isError, true, named.text)
      assert.equal(named.code, 'invalid_input')
      assert.match(
        named.text,
        /looks like a fork id \(f- and 8 hex digits\).*choose a name of another shape/,
      )
      // The harmless variant: a name of another shape reaches its own fork, not the first.
      const second = await call('workspace_fork', { name: 'f-second' })
      assert.equal(second.isError, false, second.text)
      assert.equal((await call('workspace_use', { fork: 'f-second' })).isError, false)
      assert.equal((await call('read_file', { path: 'a.txt' })).text, 'main\n')
      const listed = await call('workspace_list', {})
      assert.doesNotMatch(
        listed.text,
        new RegExp(`\\(${firstId}\\)`),
        'no fork is named like an id',
      )
    } finally {
      await client.close()
    }
  })

  it('refuses a room_write naming one file twice, writing nothing; distinct files land', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    const { client, call } = await connect(scratch)
    try {
      await call('workspace_fork', { name: 'w' })
      const twice = await call('room_write', {
        fork: 'w',
        files: [
          { path: 'b.txt', content: 'one\n' },
          { path: 'a.txt', content: 'x\n' },
          { path: './a.txt', content: 'y\n' },
        ],
      })
      assert.equal(twice.isError, true, twice.text)
      assert.equal(twice.code, 'invalid_input')
      assert.match(twice.text, /files names a\.txt twice \("a\.txt" and "\.\/a\.txt"\)/)
      assert.equal((await call('room_read', { fork: 'w', path: 'a.txt' })).text, 'main\n')
      assert.equal((await call('room_read', { fork: 'w', path: 'b.txt' })).code, 'not_found')
      const distinct = await call('room_write', {
        fork: 'w',
        files: [
          { path: 'a.txt', content: 'x\n' },
          { path: 'b.txt', content: 'one\n' },
        ],
      })
      assert.equal(distinct.isError, false, distinct.text)
      assert.equal((await call('room_read', { fork: 'w', path: 'a.txt' })).text, 'x\n')
    } finally {
      await client.close()
    }
  })

  it('refuses names with control characters from the file tools and from programs', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    const { client, call } = await connect(scratch)
    try {
      await call('workspace_fork', { name: 'names' })
      await call('workspace_use', { fork: 'names' })
      // A name that would read as a second, harmless line in the review.
      const spoof = 'evil.sh\nmodified a.txt'
      const written = await call('write_file', { path: spoof, content: 'x' })
      assert.equal(written.isError, true, written.text)
      assert.equal(written.code, 'invalid_input')
      assert.match(written.text, /has a control character \(a newline, a tab, …\) in its name/)
      const ran = await call('shell', {
        command: `touch "$(printf 'evil.sh\\nmodified a.txt')" "$(printf 'tab\\tname')" plain.txt`,
      })
      assert.equal(ran.isError, false, ran.text)
      assert.match(
        ran.text,
        /not written back: evil\.sh\nmodified a\.txt: Refused: "evil\.sh\\nmodified a\.txt" has a control character/,
      )
      assert.match(ran.text, /"tab\\tname" has a control character/)
      // The harmless variant: a plain name comes back; the review lists it alone.
      const review = await call('workspace_diff', { fork: 'names' })
      assert.match(review.text, /added\s+plain\.txt/)
      assert.doesNotMatch(review.text, /evil|tab/)
    } finally {
      await client.close()
    }
  })

  it('refuses a file path ending in "/" from room_write and the file tools, naming the field', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    const { client, call } = await connect(scratch)
    try {
      await call('workspace_fork', { name: 'slash' })
      const folderLike = await call('room_write', {
        fork: 'slash',
        files: [
          { path: 'b.txt', content: 'b\n' },
          { path: 'c/', content: 'c\n' },
        ],
      })
      assert.equal(folderLike.isError, true, folderLike.text)
      assert.equal(folderLike.code, 'invalid_input')
      assert.match(folderLike.text, /files\[1\]\.path: "c\/" ends in "\/", which names a folder/)
      assert.match(folderLike.text, /without the trailing "\/"/)
      assert.equal((await call('room_read', { fork: 'slash', path: 'c' })).code, 'not_found')
      assert.equal((await call('room_read', { fork: 'slash', path: 'b.txt' })).code, 'not_found')
      await call('workspace_use', { fork: 'slash' })
      for (const [tool, input] of [
        ['write_file', { path: 'd/', content: 'd\n' }],
        ['edit_file', { path: 'a.txt/', old_string: 'main', new_string: 'x' }],
        ['read_file', { path: 'a.txt/' }],
        ['room_read', { path: 'a.txt/' }],
      ] as const) {
        const answer = await call(tool, input)
        assert.equal(answer.isError, true, `${tool}: ${answer.text}`)
        assert.match(answer.text, /path: "[a-z.]+\/" ends in "\/", which names a folder/, tool)
      }
      // The harmless variant: the same paths without the slash are files.
      const files = await call('room_write', {
        fork: 'slash',
        files: [{ path: 'c', content: 'c\n' }],
      })
      assert.equal(files.isError, false, files.text)
      assert.equal((await call('write_file', { path: 'd', content: 'd\n' })).isError, false)
      assert.equal((await call('read_file', { path: 'c' })).text, 'c\n')
    } finally {
      await client.close()
    }
  })
})
