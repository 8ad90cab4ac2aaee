import { it } from 'node:test'
import { jailFixture } from '../src/jail/test-jail.ts'
const PY = `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for pid in (1, 2):
    try:
        open('/proc/%d/mem' % pid, 'r+b', buffering=0).close(); m = 'MEM-WRITABLE'
    except OSError as e: m = 'mem errno %d' % e.errno
    rc = libc.ptrace(0x4206, pid, None, None)
    print(pid, open('/proc/%d/cmdline' % pid,'rb').read()[:40], m, 'seize', rc, ctypes.get_errno())
print(open('/proc/self/status').read().split('CapInh')[0][-200:], os.getuid())
`
it('pid1', async (t) => {
  const { jail } = await jailFixture(t)
  await jail.run({ command: ['true'], access: 'workspace-write' })
  const r = await jail.run({ command: ['python3', '-c', PY], access: 'workspace-write' })
  console.log(r.stdout, r.stderr)
})
