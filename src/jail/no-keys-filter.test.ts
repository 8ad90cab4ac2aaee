import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { describe, it } from 'node:test'
import { assertJailAvailable, jailFixture } from './test-jail.ts'

/** Adds a key to the process's own keyring; prints `key ID ERRNO` (-1 38: no such call). */
const ADD_KEY = `import ctypes; l=ctypes.CDLL(None, use_errno=True); l.syscall.restype=ctypes.c_long; k=l.syscall({nr}, b"user", b"eitri-test-key", b"secret", 6, ctypes.c_long(-2)); print("key", k, ctypes.get_errno())`

const ADD_KEY_NR: Record<string, number> = { x64: 248, arm64: 217 }

describe('kernel keys in the jail', () => {
  it('refuses them to every command: a warm one, one with its own limits, a background job', async (t) => {
    const script = ADD_KEY.replace('{nr}', String(ADD_KEY_NR[process.arch]))
    // Positive control: here, outside any jail, the call makes a key (in a keyring that ends
    // with the process).
    const here = execFileSync('python3', ['-c', script], { encoding: 'utf8' })
    assert.match(here, /^key [1-9][0-9]* 0\n$/)
    const { jail } = await jailFixture(t)
    await assertJailAvailable(jail)
    const command = ['python3', '-c', script]
    const warm = await jail.run({ command, access: 'workspace-write' })
    const cold = await jail.run({ command, access: 'workspace-write', limits: { processes: 99 } })
    const job = await (await jail.start({ command, access: 'workspace-write' })).finished
    for (const [name, result] of Object.entries({ warm, cold, job })) {
      assert.equal(result.stdout, 'key -1 38\n', `${name}: ${result.stderr}`)
    }
  })
})
