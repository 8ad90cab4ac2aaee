import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import type { Jail, JailResult } from './jail.ts'
import { NO_KEYS_PERL, noKeysProgram } from './no-keys-filter.ts'
import { assertJailAvailable, jailFixture } from './test-jail.ts'

const IS_ROOT = process.getuid?.() === 0

/** Adds a key to the process's own keyring; prints `key ID ERRNO` (-1 38: no such call). */
const ADD_KEY = `import ctypes; l=ctypes.CDLL(None, use_errno=True); l.syscall.restype=ctypes.c_long; k=l.syscall({nr}, b"user", b"eitri-test-key", b"secret", 6, ctypes.c_long(-2)); print("key", k, ctypes.get_errno())`

const ADD_KEY_NR: Record<string, number> = { x64: 248, arm64: 217 }

const SCRIPT = ADD_KEY.replace('{nr}', String(ADD_KEY_NR[process.arch]))

/** Makes a socket of each family and an io_uring; prints each errno (0: made) as JSON. */
const SOCKETS = `import ctypes, errno, json, socket
def made(family, kind):
    try:
        socket.socket(family, kind).close(); return 0
    except OSError as error: return error.errno
l = ctypes.CDLL(None, use_errno=True); l.syscall.restype = ctypes.c_long
ring = 0 if l.syscall(425, 4, ctypes.byref(ctypes.create_string_buffer(120))) >= 0 else ctypes.get_errno()
print(json.dumps({"unix": made(1, 1), "inet": made(2, 2), "inet6": made(10, 2), "netlink": made(16, 3), "vsock": made(40, 1), "ring": ring}))`

/** A warm command, one with its own limits (cold), and a background job, each adding a key. */
async function everyKind(
  jail: Jail,
  prefix: string[] = [],
  script = SCRIPT,
): Promise<Record<string, JailResult>> {
  const command = [...prefix, 'python3', '-c', script]
  const warm = await jail.run({ command, access: 'workspace-write' })
  const cold = await jail.run({ command, access: 'workspace-write', limits: { processes: 99 } })
  const job = await (await jail.start({ command, access: 'workspace-write' })).finished
  return { warm, cold, job }
}

/** A `noexec` folder of its own (a tmpfs), unmounted after the test. */
function noexecFolder(t: TestContext): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-test-noexec-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'noexec,size=64m', 'tmpfs', folder])
  t.after(() => {
    execFileSync('umount', ['-l', folder])
    fs.rmdirSync(folder)
  })
  return folder
}

describe('kernel keys in the jail', () => {
  it('refuses them to every command: a warm one, one with its own limits, a background job', async (t) => {
    // Positive control: here, outside any jail, the call makes a key (in a keyring that ends
    // with the process).
    const here = execFileSync('python3', ['-c', SCRIPT], { encoding: 'utf8' })
    assert.match(here, /^key [1-9][0-9]* 0\n$/)
    const { jail } = await jailFixture(t)
    await assertJailAvailable(jail)
    for (const [name, result] of Object.entries(await everyKind(jail))) {
      assert.equal(result.stdout, 'key -1 38\n', `${name}: ${result.stderr}`)
    }
  })

  it(
    'refuses them where no execute-only Perl can be made (a noexec temporary folder): bubblewrap installs the filter',
    { skip: !IS_ROOT && 'mounting a noexec folder needs root' },
    async (t) => {
      const jails = await Promise.all(
        (['overlay', 'mirror'] as const).map(async (layers) => {
          const { jail } = await jailFixture(t, {}, { layers })
          await assertJailAvailable(jail)
          return [layers, jail] as const
        }),
      )
      const temporary = process.env.TMPDIR
      process.env.TMPDIR = noexecFolder(t)
      t.after(() => {
        if (temporary === undefined) delete process.env.TMPDIR
        else process.env.TMPDIR = temporary
      })
      // Each runs with bubblewrap's own PID 1 (no reaper could start), and PID 1 is filtered
      // too (a command that traced it reaches no key call either).
      const pidOne = [
        'sh',
        '-c',
        'tr "\\0" " " < /proc/1/cmdline | cut -c1-14 >&2; grep "^Seccomp:" /proc/1/status >&2; exec "$@"',
        'sh',
      ]
      for (const [layers, jail] of jails) {
        for (const [name, result] of Object.entries(await everyKind(jail, pidOne))) {
          assert.equal(result.stdout, 'key -1 38\n', `${layers} ${name}: ${result.stderr}`)
          assert.match(result.stderr, /^bwrap --args 3\nSeccomp:\t2\n$/, `${layers} ${name}`)
        }
      }
    },
  )

  it('keeps programs to the socket families their network namespace scopes, and refuses io_uring', async (t) => {
    // Found by the attack pass of 2026-12-03 (w/atkjail2): in a jail with no network, a
    // program made an AF_VSOCK socket, which no network namespace scopes (on a VM it reaches
    // the hypervisor's services); io_uring's requests make sockets without the socket call.
    // Positive control: here, outside any jail, each is made.
    const here = JSON.parse(execFileSync('python3', ['-c', SOCKETS], { encoding: 'utf8' }))
    assert.deepEqual(here, { unix: 0, inet: 0, inet6: 0, netlink: 0, vsock: 0, ring: 0 })
    const { jail } = await jailFixture(t)
    await assertJailAvailable(jail)
    for (const [name, result] of Object.entries(await everyKind(jail, [], SOCKETS))) {
      assert.deepEqual(
        JSON.parse(result.stdout || '{}'),
        { unix: 0, inet: 0, inet6: 0, netlink: 0, vsock: 97, ring: 38 },
        `${name}: ${result.stderr}`,
      )
    }
  })

  it('is one program: the bytes bubblewrap reads are the ones the Perl block packs', () => {
    const program = noKeysProgram()
    assert.ok(program !== undefined)
    const packed = execFileSync(
      'perl',
      [
        '-e',
        NO_KEYS_PERL.replace(/syscall\(\$prctl[\s\S]*?;\n(\s*or do[^\n]*\n)?/, 'print $filter;\n'),
      ],
      { env: {} },
    )
    assert.deepEqual(packed, program)
  })
})
