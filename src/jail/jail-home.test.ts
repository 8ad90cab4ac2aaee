/**
 * The programs' home in the jail is an empty folder no command can write, whichever way the
 * command starts (cold, in the warm jail, as a job), while caches still work: npm's goes to
 * `/tmp` (decision 0064). Real bubblewrap, real npm.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { assertJailAvailable, jailFixture } from './test-jail.ts'

const bash = (script: string) => ['/bin/bash', '-c', script]

/** What a command finds of its home, and whether npm's cache works. */
const PROBE = [
  'echo "home $HOME"',
  'test -d "$HOME" && echo folder',
  'echo "entries $(ls -A "$HOME" | wc -l)"',
  'test -w "$HOME" && echo writable',
  'touch "$HOME/.gitconfig.local" 2>/dev/null && echo wrote a file',
  'mkdir -p "$HOME/.config/git" 2>/dev/null && echo made a folder',
  'chmod 0700 "$HOME" 2>/dev/null && echo changed its mode',
  'mv "$HOME" /home/moved 2>/dev/null && echo moved it',
  'echo "cache $XDG_CACHE_HOME"',
  'echo "npm cache $(npm config get cache)"',
  'npm cache verify > /dev/null 2>&1 && test -d /tmp/.npm/_cacache && echo npm cached',
  'pgrep -f "^/opt/eitri/node" > /dev/null && echo warm || echo cold',
].join('; ')

const EXPECTED = [
  'home /home/agent',
  'folder',
  'entries 0',
  'cache /tmp/.cache',
  'npm cache /tmp/.npm',
  'npm cached',
].join('\n')

describe("the jail's home", { timeout: 120_000 }, () => {
  for (const layers of ['overlay', 'mirror'] as const) {
    it(`is empty and read-only, cold, warm and as a job; npm caches in /tmp (${layers})`, async (t) => {
      const { jail } = await jailFixture(t, {}, { waitForWarmJail: false, layers })
      await assertJailAvailable(jail)
      const probe = () => jail.run({ command: bash(PROBE), access: 'workspace-write' })
      const first = await probe()
      assert.equal(first.stdout, `${EXPECTED}\ncold\n`, first.stderr)
      let later = first
      for (let attempt = 0; attempt < 100 && !later.stdout.endsWith('warm\n'); attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        later = await probe()
      }
      assert.equal(later.stdout, `${EXPECTED}\nwarm\n`, later.stderr)
      const job = await jail.start({ command: bash(PROBE), access: 'workspace-write' })
      const jobRun = await job.finished
      assert.equal(jobRun.stdout, `${EXPECTED}\ncold\n`, jobRun.stderr)
    })
  }
})
