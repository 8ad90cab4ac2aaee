/**
 * The JDK finds its configuration in the jail. Debian and Ubuntu keep an OpenJDK's settings
 * (`conf/security/java.security`, its policy and logging files) in `/etc/java-N-openjdk` and
 * link them from `/usr/lib/jvm`; without them every `java` stops at start ("Error loading
 * java.security file"). Real bubblewrap, and the host's own JDK where it has one.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { it } from 'node:test'
import { assertJailAvailable, jailFixture } from './test-jail.ts'

/** Links below `dir` whose target is in `/etc` and exists on the host. */
async function linksIntoEtc(dir: string): Promise<string[]> {
  const found: string[] = []
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])
  for (const entry of entries) {
    if (!entry.isSymbolicLink()) continue
    const link = path.join(entry.parentPath, entry.name)
    const target = path.resolve(path.dirname(link), await fs.readlink(link))
    if (!target.startsWith('/etc/java')) continue
    if (
      await fs.access(target, fs.constants.R_OK).then(
        () => true,
        () => false,
      )
    )
      found.push(link)
  }
  return found.sort()
}

/** A JDK on this machine: without one there is nothing of it to find in the jail. */
const HAS_JAVA = await fs.access('/usr/bin/java').then(
  () => true,
  () => false,
)

it(
  "the JDK's links into /etc resolve in the jail, and java runs a program",
  { timeout: 120_000, skip: !HAS_JAVA && 'no JDK on this machine (/usr/bin/java)' },
  async (t) => {
    const { jail } = await jailFixture(t, {
      'Hello.java':
        'class Hello { public static void main(String[] a) { System.out.println("hello " + a.length); } }\n',
    })
    await assertJailAvailable(jail)
    const links = await linksIntoEtc('/usr/lib/jvm')
    const check = links.map((link) => `test -r ${link} || echo "missing ${link}"`)
    check.push('java Hello.java 2>&1 | head -3')
    const run = await jail.run({
      command: ['/bin/bash', '-c', check.join('\n')],
      access: 'workspace-write',
    })
    assert.equal(run.stdout, 'hello 0\n', run.stderr)
  },
)
