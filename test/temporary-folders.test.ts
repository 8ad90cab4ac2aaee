/**
 * Nothing left in the temporary folder: a real `eitri serve` that exits removes its jail,
 * mirror and drive folders; one killed with `kill -9` leaves them, and the next eitri that
 * starts sweeps them.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import { describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { EITRI_BIN, runEitri } from './helpers/eitri-process.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

/** The folders in the temporary folder that name process `pid` as their owner. */
function foldersOf(pid: number): string[] {
  return fs
    .readdirSync(os.tmpdir())
    .filter((name) => new RegExp(`^eitri-[a-z-]+-${pid}\\.\\d+-\\w{6}$`).test(name))
    .sort()
}

/** A server over stdio that has run a command in the jail (so it has its jail and mirror). */
async function busyServer(
  scratch: Scratch,
): Promise<{ client: Client; transport: StdioClientTransport; pid: number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [EITRI_BIN, 'serve', ...scratch.flags],
    stderr: 'pipe',
  })
  const client = new Client({ name: 'eitri-test', version: '1.0.0' })
  await client.connect(transport)
  const result = await client.callTool({
    name: 'shell',
    arguments: { command: 'echo made > out.txt; cat out.txt' },
  })
  assert.notEqual(result.isError, true, JSON.stringify(result.content))
  const pid = transport.pid
  assert.ok(pid !== null)
  return { client, transport, pid }
}

async function gone(pid: number): Promise<void> {
  for (let waited = 0; waited < 20_000; waited += 100) {
    if (!fs.existsSync(`/proc/${pid}`)) return
    await delay(100)
  }
  assert.fail(`process ${pid} did not end`)
}

describe('eitri in the temporary folder', () => {
  it('a server that exits removes its jail, layers (or mirror) and drive folders', async () => {
    await using scratch = await makeScratch()
    const { client, pid } = await busyServer(scratch)
    const made = foldersOf(pid)
    // The workspace as programs see it: overlays for a root caller, else a mirror.
    for (const kinds of [['drive'], ['jail'], ['layers', 'mirror']])
      assert.ok(
        made.some((name) => kinds.some((kind) => name.startsWith(`eitri-${kind}-`))),
        `the server made its ${kinds.join(' or ')} folder: ${made.join(', ')}`,
      )
    await client.close() // its stdin ends: the server exits
    await gone(pid)
    assert.deepEqual(foldersOf(pid), [])
  })

  it('one killed with kill -9 leaves them, and the next eitri that starts sweeps them', async () => {
    await using scratch = await makeScratch()
    const { client, pid } = await busyServer(scratch)
    process.kill(pid, 'SIGKILL')
    await gone(pid)
    await client.close().catch(() => undefined)
    const left = foldersOf(pid)
    assert.ok(left.length >= 3, `kill -9 leaves the folders behind: ${left.join(', ')}`)

    await using other = await makeScratch()
    const next = await runEitri(['exec', ...other.flags, '--', 'true'])
    assert.equal(next.status, 0, next.stderr)
    for (let waited = 0; foldersOf(pid).length > 0 && waited < 20_000; waited += 100)
      await delay(100)
    assert.deepEqual(foldersOf(pid), [], 'swept by the next eitri')
    assert.deepEqual(
      fs.readdirSync(os.tmpdir()).filter((name) => name.includes(`-${pid}.`)),
      [],
      'and nothing half removed',
    )
  })
})
