import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startBounded } from './bounded-spawn.ts'
import { RequestChannel, type ChannelLine } from './request-channel.ts'

/**
 * A peer in a real Node process: answers `{ id, echo }` with `{ id, said }` (in reverse order
 * of arrival when asked to hold), prints `{ ready: true }` first, and on `die` exits at once
 * without answering what it holds.
 */
const PEER = `
const held = []
process.stdout.write(JSON.stringify({ ready: true }) + '\\n')
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line)
  if (message.echo === 'die') process.exit(3)
  if (message.echo === 'garbage') return process.stdout.write('not json\\n')
  if (message.echo === 'stranger') return process.stdout.write(JSON.stringify({ id: 999, said: 'x' }) + '\\n')
  if (message.echo === 'hold') return held.push(message.id)
  process.stdout.write(JSON.stringify({ id: message.id, said: message.echo }) + '\\n')
})
`

type Reply = { readonly said: string }

function parse(value: unknown): ChannelLine<Reply, 'ready'> | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const line = value as Record<string, unknown>
  if (line.ready === true) return { notice: 'ready' }
  if (typeof line.id === 'number' && typeof line.said === 'string')
    return { id: line.id, reply: { said: line.said } }
  return undefined
}

/** A channel to a fresh peer process, closed when the peer's output ends. */
async function peer(): Promise<{
  channel: RequestChannel<{ echo: string }, Reply, 'ready'>
  exited: Promise<unknown>
  closes: string[]
}> {
  let ready: () => void = () => undefined
  const isReady = new Promise<void>((resolve) => (ready = resolve))
  const closes: string[] = []
  // eslint-disable-next-line prefer-const -- the channel and the process refer to each other
  let channel: RequestChannel<{ echo: string }, Reply, 'ready'>
  const child = startBounded(process.execPath, ['-e', PEER], {
    keepStdinOpen: true,
    stdout: { push: (chunk) => channel.push(chunk) },
    timeoutMs: 20_000,
  })
  channel = new RequestChannel({
    write: (line) => child.write(line),
    parse,
    maxLineBytes: 4096,
    peer: 'the test peer',
    onNotice: () => ready(),
    onClose: (reason, outOfProtocol) => {
      closes.push(`${outOfProtocol ? 'protocol' : 'closed'}: ${reason}`)
      child.kill()
    },
  })
  const exited = child.exited.then((exit) =>
    channel.close(`the peer ended (exit ${exit.exitCode ?? exit.signal})`),
  )
  await isReady
  return { channel, exited, closes }
}

describe('request channel', () => {
  it('matches replies to calls by id', async () => {
    const { channel, exited } = await peer()
    const [a, b] = await Promise.all([channel.call({ echo: 'one' }), channel.call({ echo: 'two' })])
    assert.deepEqual([a.said, b.said], ['one', 'two'])
    assert.equal(channel.pendingCount, 0)
    channel.close('done')
    await exited
  })

  it('a peer that dies mid-call rejects every pending call with why', async () => {
    const { channel, exited } = await peer()
    const held = [channel.call({ echo: 'hold' }), channel.call({ echo: 'hold' })]
    // Positive control: the live peer still answers while those two wait.
    assert.equal((await channel.call({ echo: 'alive' })).said, 'alive')
    assert.equal(channel.pendingCount, 2)
    const dying = channel.call({ echo: 'die' })
    for (const call of [...held, dying]) await assert.rejects(call, /the peer ended \(exit 3\)/)
    assert.equal(channel.pendingCount, 0)
    // A call after the close is rejected at once, not left waiting.
    await assert.rejects(channel.call({ echo: 'late' }), /the peer ended/)
    await exited
  })

  it('a line out of protocol closes the channel and rejects what waits', async () => {
    for (const [what, expected] of [
      ['garbage', /the test peer sent a line that is not JSON/],
      ['stranger', /the test peer answered call 999, which is not waiting/],
    ] as const) {
      const { channel, exited, closes } = await peer()
      const held = channel.call({ echo: 'hold' })
      void channel.call({ echo: what }).catch(() => undefined)
      await assert.rejects(held, expected)
      assert.match(closes[0] ?? '', /^protocol: /)
      await exited
    }
  })

  it("a call's own check can refuse a reply, which closes the channel", async () => {
    const { channel, exited } = await peer()
    await assert.rejects(
      channel.call({ echo: 'too long' }, (reply) =>
        reply.said.length > 3 ? 'the peer said more than it may' : undefined,
      ),
      /the peer said more than it may/,
    )
    await exited
  })

  it('a line over the limit closes the channel', async () => {
    const { channel, exited } = await peer()
    await assert.rejects(channel.call({ echo: 'x'.repeat(10_000) }), /was over 4096 bytes/)
    await exited
  })
})
