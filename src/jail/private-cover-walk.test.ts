/**
 * A private path inside the workspace (eitri's state folder) is covered in the jail by an empty
 * folder a tree walker can list: `find .` and `node --test`, which scan the whole tree, pass,
 * and still read nothing of what the state holds.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { JailOptions } from './jail.ts'
import { assertJailAvailable, jailFixture } from './test-jail.ts'

const IS_ROOT = process.getuid?.() === 0

const FILES = {
  'state/secret.json': '{"token":"SECRET-IN-STATE"}',
  'state/deeper/more.txt': 'SECRET-DEEPER',
  'test/a.test.mjs': "import test from 'node:test'\ntest('runs', () => {})\n",
}

/** Walks the tree, runs the tests in it, then tries the state's files by name. */
const SCRIPT = [
  'find . > /tmp/found; echo "find=$?"; cat /tmp/found',
  'node --test > /tmp/tested 2>&1; echo "node-test=$?"; tail -n 20 /tmp/tested',
  'echo "listed: $(ls -A state)"',
  'cat state/secret.json state/deeper/more.txt',
  'touch state/new.txt && echo wrote-state',
].join('; ')

async function check(t: Parameters<typeof jailFixture>[0], options: Partial<JailOptions>) {
  const { jail } = await jailFixture(t, FILES, { privateInside: ['state'], ...options })
  await assertJailAvailable(jail)
  for (const how of ['foreground', 'background'] as const) {
    const request = { command: ['sh', '-c', SCRIPT], access: 'workspace-write' as const }
    const result =
      how === 'foreground'
        ? await jail.run({ ...request, timeoutMs: 60_000 })
        : await (
            await jail.start(request)
          ).finished
    const output = result.stdout + result.stderr
    assert.match(output, /find=0/, `${how}: ${output}`)
    assert.match(output, /node-test=0/, `${how}: ${output}`)
    // Positive control: the walk reached the test file, and the tests ran.
    assert.match(output, /\.\/test\/a\.test\.mjs/, how)
    assert.match(output, /pass 1/, `${how}: ${output}`)
    assert.match(output, /listed: \n/, `${how}: the cover is empty: ${output}`)
    assert.ok(!output.includes('SECRET'), `${how} read the state: ${output}`)
    assert.ok(!output.includes('wrote-state'), `${how} wrote into the cover: ${output}`)
  }
}

describe('a state folder inside the workspace', () => {
  it('is an empty folder to tree walkers in the jail (mirrored workspace)', async (t) => {
    await check(t, { layers: 'mirror' })
  })

  it(
    'is an empty folder to tree walkers in the jail (overlay layers)',
    { skip: !IS_ROOT && 'overlays need root' },
    async (t) => {
      await check(t, { layers: 'overlay' })
    },
  )
})
