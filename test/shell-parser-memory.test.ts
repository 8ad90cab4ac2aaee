/**
 * The shell parser's WebAssembly stays on V8's baseline compiler in a real `eitri serve`:
 * without that, V8 recompiles the bash grammar's hot functions in the background after a few
 * commands, which raised the server's peak memory by about half a gigabyte and held its exit
 * for seconds. The control (`EITRI_WASM_TIER_UP=1`, V8's default) shows the spike.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { EITRI_BIN } from './helpers/eitri-process.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

const MIB = 1024 * 1024
/** Far above a server's own peak (about 150 MiB), far below one with the grammar recompiled. */
const SPIKE = 400 * MIB

/** The peak resident memory of a process, from the kernel. */
function peakBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024
}

/**
 * Starts a server, has it judge and run a few shell commands, then watches its peak memory
 * for up to `watchMs` (ending early once past the spike). Returns the peak seen.
 */
async function peakAfterCommands(
  scratch: Scratch,
  environment: Record<string, string>,
  watchMs: number,
): Promise<number> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [EITRI_BIN, 'serve', ...scratch.flags],
    env: { ...(process.env as Record<string, string>), ...environment },
    stderr: 'pipe',
  })
  const client = new Client({ name: 'parser-memory-test', version: '1' })
  await client.connect(transport)
  try {
    for (let round = 0; round < 5; round++) {
      const result = await client.callTool({
        name: 'shell',
        arguments: {
          command: `for i in $(seq 1 5); do echo "x$i" | grep -v y > /dev/null; done && test -d . || echo ${round}`,
        },
      })
      assert.notEqual(result.isError, true, JSON.stringify(result.content))
    }
    const pid = transport.pid
    assert.ok(pid !== null)
    let peak = peakBytes(pid)
    for (let waited = 0; waited < watchMs && peak < SPIKE; waited += 250) {
      await sleep(250)
      peak = peakBytes(pid)
    }
    return peak
  } finally {
    await client.close()
  }
}

describe('the shell parser in a server', () => {
  it('keeps its WebAssembly on the baseline compiler: no background recompile, no spike', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'a\n' })
    // The control first: with V8's default tiering the spike comes (the test would not see
    // a regression otherwise).
    const tiered = await peakAfterCommands(scratch, { EITRI_WASM_TIER_UP: '1' }, 60_000)
    assert.ok(
      tiered >= SPIKE,
      `control: with tier-up the peak was ${Math.round(tiered / MIB)} MiB, expected the spike`,
    )
    const baseline = await peakAfterCommands(scratch, {}, 10_000)
    assert.ok(
      baseline < SPIKE,
      `the server's peak was ${Math.round(baseline / MIB)} MiB after parsing: the grammar was recompiled`,
    )
  })
})
