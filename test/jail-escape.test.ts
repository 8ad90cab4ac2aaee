/**
 * Jail escapes, tried for real: every attack class of jail-threats.md §7 that applies without a
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
 * fd 251 of jail-threats §20 did).
 */
const INHERITED_FD = 20
/** The whole runner is stopped after this long. */
const RUNNER_TIMEOUT_MS = 180_000

/** Node and the runner as the unprivileged caller can reach them. */
interface Runtime {
  readonly node: string
  readonly runner: string
  remove(): void
}

/** Whether uid 65534 can start `node` and read every file given. */
function readableByNobody(node: string, files: readonly string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const check = `for (const f of ${JSON.stringify(files)}) require('fs').accessSync(f, require('fs').constants.R_OK)`
    const child = spawn(node, ['-e', check], { uid: NOBODY, gid: NOBODY, stdio: 'ignore' })
    child.once('error', () => resolve(false))
    child.once('exit', (code) => resolve(code === 0))
  })
}

/**
 * The repository as uid 65534 can run it. CI may clone it where 65534 cannot enter (under
 * /root): then Node, the sources, the attacks and the packages go to a fresh 0755 folder.
 */
async function runtimeForNobody(): Promise<Runtime> {
  const needed = [RUNNER, fileURLToPath(import.meta.resolve('zod'))]
  if (await readableByNobody(process.execPath, needed)) {
    return { node: process.execPath, runner: RUNNER, remove: () => undefined }
  }
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-escape-copy-'))
  const nodePackage = path.join(REPOSITORY, 'node_modules/node')
  fs.copyFileSync(process.execPath, path.join(copy, 'node'))
  for (const part of ['package.json', 'src', 'test/escape', 'node_modules']) {
    fs.cpSync(path.join(REPOSITORY, part), path.join(copy, part), {
      recursive: true,
      // The Node package is the binary, copied above.
      filter: (source) => source !== nodePackage && !source.startsWith(`${nodePackage}/`),
    })
  }
  for (const entry of [copy, ...fs.readdirSync(copy, { recursive: true }).map(String)]) {
    const full = path.isAbsolute(entry) ? entry : path.join(copy, entry)
    const stat = fs.lstatSync(full)
    if (!stat.isSymbolicLink()) fs.chmodSync(full, stat.mode | (stat.isFile() ? 0o444 : 0o555))
  }
  fs.chmodSync(path.join(copy, 'node'), 0o755)
  const runtime = {
    node: path.join(copy, 'node'),
    runner: path.join(copy, 'test/escape/run-attacks.ts'),
    remove: () => fs.rmSync(copy, { recursive: true, force: true }),
  }
  assert.ok(
    await readableByNobody(runtime.node, [runtime.runner]),
    `uid ${NOBODY} cannot run the copy in ${copy} either: is ${os.tmpdir()} reachable by it?`,
  )
  return runtime
}

/** Runs every attack for `caller` in its own process and answers the reports by key. */
async function runAttacks(caller: Caller): Promise<Map<string, AttackReport>> {
  const asNobody = caller === 'unprivileged' && IS_ROOT
  const runtime = asNobody
    ? await runtimeForNobody()
    : { node: process.execPath, runner: RUNNER, remove: () => undefined }
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-escape-run-'))
  fs.chmodSync(scratch, 0o755)
  if (asNobody) fs.chownSync(scratch, NOBODY, NOBODY)
  const canaryFile = path.join(scratch, 'inherited-fd-canary')
  fs.writeFileSync(canaryFile, '', { mode: 0o666 })
  fs.chmodSync(canaryFile, 0o666)
  const descriptor = fs.openSync(canaryFile, 'a')
  const secret = (name: string) => `${name}-${randomBytes(8).toString('hex')}`
  try {
    const child = spawn(runtime.node, [runtime.runner, caller], {
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
      ...(asNobody ? { uid: NOBODY, gid: NOBODY } : {}),
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
      throw new Error(`the ${caller} runner answered no results (exit ${status}): ${stderr}`)
    }
    return new Map(reports.map((report) => [report.key, report]))
  } finally {
    fs.closeSync(descriptor)
    fs.rmSync(scratch, { recursive: true, force: true })
    runtime.remove()
  }
}

const callers: readonly Caller[] = IS_ROOT ? ['root', 'unprivileged'] : ['unprivileged']

describe('jail escapes (jail-threats §7), each beside a positive control', () => {
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
