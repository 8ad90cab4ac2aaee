import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import type { JailBind } from '../bubblewrap/jail-spec.ts'
import type { Jail } from './jail.ts'
import { AHEAD_JAILS } from './prestarted-jails.ts'
import { assertJailAvailable, jailFixture } from './test-jail.ts'

/** The Node running the tests, mounted into the jail: there may be no other. */
const NODE = '/opt/test-node'
const nodeBind: JailBind = { source: process.execPath, target: NODE, writable: false }

/** Reserves far more address space than it uses, as WebAssembly runtimes, the JVM and Go do. */
const WEBASSEMBLY = [
  // WebAssembly memory: up to 1 GiB, and a module that declares memory, instantiated.
  'new WebAssembly.Memory({ initial: 1, maximum: 16384 })',
  'new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 5, 5, 1, 1, 1, 128, 2])))',
  'console.log("reserved")',
].join(';')
// A resizable buffer reserves its maximum up front (Node 24's V8 adapts its WebAssembly
// reservations to an address-space limit; it cannot shrink this one).
const RESERVING = `new ArrayBuffer(1, { maxByteLength: 8 * 2 ** 30 }); ${WEBASSEMBLY}`

/** Touches `mib` MiB, 16 MiB at a time, then says so. */
const allocate = (mib: number): string =>
  `const kept = []; for (let i = 0; i < ${mib / 16}; i++) kept.push(Buffer.alloc(16 * 2 ** 20, 1)); console.log("allocated ${mib} MiB")`

async function runNode(jail: Jail, code: string, memoryBytes?: number) {
  return jail.run({
    command: [NODE, '-e', code],
    access: 'read-only',
    binds: [nodeBind],
    ...(memoryBytes === undefined ? {} : { limits: { memoryBytes } }),
  })
}

for (const memoryCgroups of [true, false]) {
  const bound = memoryCgroups ? 'cgroup' : 'rlimit-data'
  describe(`the jail's memory limit (${memoryCgroups ? 'memory cgroup where possible' : 'RLIMIT_DATA only'})`, () => {
    it('lets a program reserve far more address space than the limit', async (t) => {
      const { jail } = await jailFixture(t, {}, { memoryCgroups })
      await assertJailAvailable(jail)
      const result = await runNode(jail, RESERVING)
      assert.equal(result.exitCode, 0, result.stderr)
      assert.equal(result.stdout, 'reserved\n')
      if (!memoryCgroups) assert.equal(result.memory?.boundBy, 'rlimit-data')
    })

    it('stops a program that uses more than a small limit, and names the limit', async (t) => {
      const { jail } = await jailFixture(t, {}, { memoryCgroups })
      await assertJailAvailable(jail)
      const support = jail.memorySupport()
      if (!memoryCgroups) assert.equal(support.bound, bound)
      // RLIMIT_DATA counts private mappings Node 24 makes and never touches: it needs about
      // 768 MiB of it to start at all, where a cgroup counts only what it uses.
      const limit = (support.bound === 'cgroup' ? 256 : 1024) * 2 ** 20
      const over = await runNode(jail, allocate((2 * limit) / 2 ** 20), limit)
      assert.notEqual(over.exitCode, 0)
      assert.doesNotMatch(over.stdout, /allocated/)
      assert.equal(over.memory?.limitBytes, limit)
      const expected = support.bound === 'cgroup' ? 'oom-kill' : 'out-of-memory'
      assert.equal(over.memory?.exceeded, expected, over.stderr.slice(-500))
      // The control: under the limit the same program completes.
      const under = await runNode(jail, allocate(64), limit)
      assert.equal(under.exitCode, 0, under.stderr.slice(-500))
      assert.equal(under.stdout, 'allocated 64 MiB\n')
      assert.equal(under.memory?.exceeded, undefined)
      assert.equal(under.memory?.boundBy, support.bound)
    })
  })
}

describe('the memory cgroup', () => {
  it("is made below this process's own cgroup when it can be, holds the program, and is removed after", async (t) => {
    const { jail } = await jailFixture(t, {}, { limits: { memoryBytes: 256 * 2 ** 20 } })
    await assertJailAvailable(jail)
    const support = jail.memorySupport()
    if (support.bound !== 'cgroup') {
      // Where none can be made, every run says it is bounded by RLIMIT_DATA, and why.
      assert.ok(support.reason.length > 0)
      return
    }
    const ours = (): string[] =>
      fs.readdirSync(support.parent).filter((name) => name.startsWith(`eitri-${process.pid}-`))
    assert.deepEqual(ours(), [])
    const job = await jail.start({ command: ['/bin/sleep', '2'], access: 'read-only' })
    // The first one made: the next start's launcher, started meanwhile, has one of its own.
    const [cgroup] = ours().sort(
      (a, b) => Number(a.split('-').at(-1)) - Number(b.split('-').at(-1)),
    )
    assert.ok(cgroup !== undefined, 'a cgroup for the running program')
    const folder = path.join(support.parent, cgroup)
    const limitFile = support.version === 1 ? 'memory.limit_in_bytes' : 'memory.max'
    assert.equal(
      fs.readFileSync(path.join(folder, limitFile), 'utf8').trim(),
      String(256 * 2 ** 20),
    )
    const procs = (): string => fs.readFileSync(path.join(folder, 'cgroup.procs'), 'utf8').trim()
    for (let waited = 0; procs() === '' && waited < 1500; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50))
    assert.notEqual(procs(), '', 'the program runs in it')
    const result = await job.finished
    assert.equal(result.memory?.boundBy, 'cgroup')
    for (let waited = 0; ours().includes(cgroup) && waited < 3000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50))
    assert.ok(!ours().includes(cgroup), 'removed once the program ended')
    // The launcher waiting for the next start goes with the jail, and its cgroup with it.
    await jail.close()
    for (let waited = 0; ours().length > 0 && waited < 3000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50))
    assert.deepEqual(ours(), [])
  })

  it('is not made ahead for a next start after a one-shot start (eitri exec)', async (t) => {
    const limits = { limits: { memoryBytes: 256 * 2 ** 20 } }
    const support = (await jailFixture(t, {}, limits)).jail.memorySupport()
    assert.equal(support.bound, 'cgroup', 'this machine can make memory cgroups')
    if (support.bound !== 'cgroup') return
    const ours = (): string[] =>
      fs.readdirSync(support.parent).filter((name) => name.startsWith(`eitri-${process.pid}-`))
    let mode = 'undecided'
    /** The cgroups of this process left a while after one start in a new jail ended. */
    const leftAfter = async (options: { oneShot?: boolean }): Promise<string[]> => {
      const { jail } = await jailFixture(t, {}, limits)
      await assertJailAvailable(jail)
      const job = await jail.start({ command: ['/bin/true'], access: 'read-only' }, options)
      assert.equal((await job.finished).exitCode, 0)
      mode = jail.layers.mode
      // The program's own cgroup goes once it ended; what stays is a launcher's, waiting.
      await new Promise((resolve) => setTimeout(resolve, 1500))
      const left = ours()
      await jail.close()
      for (let waited = 0; ours().length > 0 && waited < 3000; waited += 50)
        await new Promise((resolve) => setTimeout(resolve, 50))
      return left
    }
    // The control: a background start expects more like it, so a launcher (on a mirror) or
    // two jails (on overlays, prestarted-jails.ts) wait, each with a cgroup.
    const left = await leftAfter({})
    assert.equal(left.length, mode === 'overlay' ? AHEAD_JAILS : 1)
    assert.deepEqual(await leftAfter({ oneShot: true }), [], 'nothing waits for a next start')
  })

  it("lets the jail's own node, when there is one, run WebAssembly in the warm jail", async (t) => {
    const { jail } = await jailFixture(t)
    await assertJailAvailable(jail)
    if (!fs.existsSync('/usr/bin/node')) return
    const result = await jail.run({
      command: ['/usr/bin/node', '-e', WEBASSEMBLY],
      access: 'read-only',
    })
    assert.equal(result.exitCode, 0, result.stderr)
    assert.equal(result.stdout, 'reserved\n')
  })
})
