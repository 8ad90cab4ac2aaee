/**
 * Jail escapes, tried for real: every attack class of docs/jail-attack-classes.md that applies without a
 * network proxy, against the bubblewrap jail and the host file tools, as a root caller and as
 * an unprivileged one. Each attack runs beside a positive control (the same attack without the
 * jail, as the same caller, must reach its target) and is judged by a canary on the host, so no
 * attack passes because it never ran. The attacks live in test/escape/; a runner process per
 * caller tries them all and answers one JSON line.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { CallerMounts, mountingLaunch } from '../src/bubblewrap/caller-mounts.ts'
import { ATTACKS, attackKey } from './escape/attacks.ts'
import type { AttackReport, Caller } from './escape/helpers.ts'

const IS_ROOT = process.getuid?.() === 0
/** The unprivileged caller when the test runs as root. */
const NOBODY = 65534
const REPOSITORY = fileURLToPath(new URL('..', import.meta.url))
const RUNNER = path.join(REPOSITORY, 'test/escape/run-attacks.ts')
/**
 * Where the runner inherits the descriptor of attack 20: Node marks descriptors 0 to 16 it
 * inherits close-on-exec at start-up, so a leak must sit above them (as the harness's stray
 * fd 251 of jail-attack-classes §20 did).
 */
const INHERITED_FD = 20
/** The whole runner is stopped after this long. */
const RUNNER_TIMEOUT_MS = 420_000

/** The unprivileged caller, as the jail code names a user a root caller drops to. */
const NOBODY_IDENTITY = { uid: NOBODY, gid: NOBODY, dropped: true } as const

/**
 * How to start the runner as `caller`. As uid 65534 from a checkout it cannot enter (CI clones
 * into a 0700 folder), the checkout is mounted for it in a private mount namespace first, as
 * the jail does for its own files (src/bubblewrap/caller-mounts.ts): no copy, and the runner sees the
 * same files.
 */
function runnerLaunch(
  caller: Caller,
  asNobody: boolean,
  mounts: CallerMounts,
): { command: string; args: string[]; asUser: boolean } {
  if (!asNobody) return { command: process.execPath, args: [RUNNER, caller], asUser: false }
  const reached = mounts.reach([process.execPath, RUNNER])
  const [node = process.execPath, runner = RUNNER] = reached.paths
  if (reached.mounts.length === 0) return { command: node, args: [runner, caller], asUser: true }
  return {
    ...mountingLaunch(node, [runner, caller], NOBODY_IDENTITY, reached.mounts),
    asUser: false,
  }
}

/** Runs every attack for `caller` in its own process and answers the reports by key. */
async function runAttacks(caller: Caller): Promise<Map<string, AttackReport>> {
  const asNobody = caller === 'unprivileged' && IS_ROOT
  const mounts = new CallerMounts(NOBODY_IDENTITY, [os.tmpdir(), '/tmp'])
  const launch = runnerLaunch(caller, asNobody, mounts)
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-escape-run-'))
  fs.chmodSync(scratch, 0o755)
  if (asNobody) fs.chownSync(scratch, NOBODY, NOBODY)
  const canaryFile = path.join(scratch, 'inherited-fd-canary')
  fs.writeFileSync(canaryFile, '', { mode: 0o666 })
  fs.chmodSync(canaryFile, 0o666)
  const descriptor = fs.openSync(canaryFile, 'a')
  const secret = (name: string) => `${name}-${randomBytes(8).toString('hex')}`
  try {
    const child = spawn(launch.command, launch.args, {
      stdio: [
        'ignore',
        'pipe',
        'pipe',
        ...Array<'ignore'>(INHERITED_FD - 3).fill('ignore'),
        descriptor,
      ],
      env: {
        ...process.env,
        TMPDIR: scratch,
        ...(asNobody ? { HOME: scratch } : {}),
        EITRI_ESCAPE_TOKEN: secret('eitri-escape-token'),
        AWS_SECRET_ACCESS_KEY: secret('aws-secret'),
        GITHUB_TOKEN: secret('ghp'),
        EITRI_ESCAPE_FD: String(INHERITED_FD),
        EITRI_ESCAPE_FD_CANARY: canaryFile,
      },
      ...(launch.asUser ? { uid: NOBODY, gid: NOBODY } : {}),
    })
    let stdout = ''
    let stderr = ''
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), RUNNER_TIMEOUT_MS)
    const status = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject)
      child.once('close', resolve)
    })
    clearTimeout(timer)
    const line = stdout.trim().split('\n').at(-1) ?? ''
    let reports: AttackReport[]
    try {
      reports = (JSON.parse(line) as { reports: AttackReport[] }).reports
    } catch {
      throw new Error(
        `the ${caller} runner answered no results (exit ${status}): ${stderr}${asNobody ? `\nAs uid ${NOBODY} it reads this checkout's files: they must be readable by others, as a clone made with umask 022 is (the folders above it may stay closed).` : ''}`,
      )
    }
    return new Map(reports.map((report) => [report.key, report]))
  } finally {
    fs.closeSync(descriptor)
    fs.rmSync(scratch, { recursive: true, force: true })
    mounts.close()
  }
}

const callers: readonly Caller[] = IS_ROOT ? ['root', 'unprivileged'] : ['unprivileged']

describe('jail escapes (jail-attack-classes §7), each beside a positive control', () => {
  for (const caller of callers) {
    describe(`as ${caller === 'root' ? 'root' : IS_ROOT ? `uid ${NOBODY}` : 'this user'}`, () => {
      let reports: Promise<Map<string, AttackReport>>
      before((t) => {
        if (!IS_ROOT) {
          t.diagnostic(
            'the root caller needs a root test process; run the suite as root to exercise it',
          )
        }
        reports = runAttacks(caller)
        // Each test reports the failure itself.
        reports.catch(() => undefined)
      })
      for (const attack of ATTACKS.filter((candidate) => candidate.callers.includes(caller))) {
        it(`§${attack.id} ${attack.name}`, async () => {
          const report = (await reports).get(attackKey(attack))
          assert.ok(report !== undefined, `the runner did not report ${attackKey(attack)}`)
          assert.equal(report.error, undefined, `the attack itself failed: ${report.error}`)
          assert.ok(
            report.control === true && report.jailed === false,
            `control reached: ${report.control} (must be true), jailed reached: ${report.jailed} (must be false). ${report.detail}`,
          )
        })
      }
    })
  }
})
