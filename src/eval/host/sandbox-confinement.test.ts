import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import type { Readable, Writable } from 'node:stream'
import { describe, it, type TestContext } from 'node:test'
import { EitriError } from '../../errors/eitri-error.ts'
import { SANDBOX_PIPES } from '../sandbox-protocol.ts'
import { IsolateEngine } from './isolate-engine.ts'
import {
  buildSandboxBwrapArgs,
  sandboxLaunch,
  sandboxReadable,
  type SandboxConfinement,
} from './sandbox-confinement.ts'
import { spawnSandbox } from './sandbox-process.ts'

const IS_ROOT = process.getuid?.() === 0

/**
 * What a guest that broke out of its isolate would try, run as the sandbox process itself: it
 * reads its orders on fd 5 (the large lane from the server), tries each thing, and answers on
 * fd 3 (the small lane) and fd 4 (the large one), so its answer also shows the pipes survive.
 */
const PROBE = `
import fs from 'node:fs'
import net from 'node:net'
const attempt = (run) => { try { return run() } catch (error) { return 'denied: ' + (error.code ?? error.message) } }
const orders = new net.Socket({ fd: ${SANDBOX_PIPES.largeToSandbox}, readable: true, writable: false })
let text = ''
orders.on('data', async (chunk) => {
  text += chunk
  if (!text.includes('\\n')) return
  orders.destroy()
  const { workspaceFile, port, hostPid } = JSON.parse(text)
  const tcp = await new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    socket.once('connect', () => { socket.destroy(); resolve('connected') })
    socket.once('error', (error) => resolve('denied: ' + error.code))
    setTimeout(() => { socket.destroy(); resolve('denied: no answer') }, 3000)
  })
  const report = {
    workspace: attempt(() => fs.readFileSync(workspaceFile, 'utf8')),
    shadow: attempt(() => (fs.readFileSync('/etc/shadow', 'utf8'), 'read')),
    home: attempt(() => (fs.readdirSync(process.getuid() === 0 ? '/root' : '/home'), 'listed')),
    tcp,
    hostProcessSeen: fs.readdirSync('/proc').includes(String(hostPid)),
    processes: fs.readdirSync('/proc').filter((name) => /^[0-9]+$/.test(name)).length,
    uid: process.getuid(),
    environment: Object.keys(process.env),
    stdin: 'open',
  }
  const large = new net.Socket({ fd: ${SANDBOX_PIPES.largeToServer}, readable: false, writable: true })
  large.end('large lane\\n')
  const small = new net.Socket({ fd: ${SANDBOX_PIPES.smallToServer}, readable: false, writable: true })
  small.end(JSON.stringify(report) + '\\n', () => process.exit(0))
})
`

interface ProbeReport {
  workspace: string
  shadow: string
  home: string
  tcp: string
  hostProcessSeen: boolean
  processes: number
  uid: number
  environment: string[]
}

/** A readable file outside the sandbox's binds: a workspace the server would serve. */
function workspaceWithSecret(t: TestContext): string {
  const folder = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-evaljail-ws-')))
  t.after(() => fs.rmSync(folder, { recursive: true, force: true }))
  // Readable by anyone: only the sandbox's binds keep it out, not modes.
  fs.chmodSync(folder, 0o755)
  const file = path.join(folder, 'secret.txt')
  fs.writeFileSync(file, 'the workspace secret', { mode: 0o644 })
  return file
}

/** The probe, in a private (0700) folder: a root caller's `nobody` must be shown it. */
function probeScript(t: TestContext): string {
  const folder = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-evaljail-probe-')))
  t.after(() => fs.rmSync(folder, { recursive: true, force: true }))
  const script = path.join(folder, 'probe.mjs')
  fs.writeFileSync(script, PROBE)
  return script
}

function readLine(stream: Readable | null | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    stream?.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8')
      const end = text.indexOf('\n')
      if (end >= 0) resolve(text.slice(0, end))
    })
    stream?.once('end', () => reject(new Error(`no line, only ${JSON.stringify(text)}`)))
  })
}

/** Runs the probe the way the server runs its sandbox, `confinement` as given. */
async function runProbe(
  t: TestContext,
  confinement: SandboxConfinement,
): Promise<{ report: ProbeReport; large: string }> {
  const script = probeScript(t)
  const workspaceFile = workspaceWithSecret(t)
  await using server = await loopbackServer()
  const launch = sandboxLaunch({
    nodePath: process.execPath,
    nodeArgs: [],
    script,
    confinement,
  })
  const child: ChildProcess = spawnSandbox(launch).child
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  t.after(async () => {
    child.kill('SIGKILL')
    await exited
    launch.release()
  })
  const stdio = child.stdio as readonly (Readable | Writable | null)[]
  const small = readLine(stdio[SANDBOX_PIPES.smallToServer] as Readable)
  const large = readLine(stdio[SANDBOX_PIPES.largeToServer] as Readable)
  ;(stdio[SANDBOX_PIPES.largeToSandbox] as Writable).write(
    JSON.stringify({ workspaceFile, port: server.port, hostPid: process.pid }) + '\n',
  )
  try {
    return { report: JSON.parse(await small) as ProbeReport, large: await large }
  } catch (error) {
    throw new Error(`the probe did not answer (${String(error)}); its stderr: ${stderr}`, {
      cause: error,
    })
  }
}

/** A TCP server on loopback that answers nothing; counts connections. */
async function loopbackServer(): Promise<{ port: number } & AsyncDisposable> {
  const server = net.createServer((socket) => socket.destroy())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  assert.ok(address !== null && typeof address === 'object')
  return {
    port: address.port,
    [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

describe('the code sandbox process inside bubblewrap', () => {
  it('the control: the same probe run unconfined reads the workspace, reaches loopback, sees the host', async (t) => {
    const { report, large } = await runProbe(t, 'none')
    assert.equal(report.workspace, 'the workspace secret')
    assert.equal(report.tcp, 'connected')
    assert.equal(report.hostProcessSeen, true)
    assert.equal(large, 'large lane')
    if (IS_ROOT) {
      assert.equal(report.shadow, 'read')
      assert.equal(report.home, 'listed')
      assert.equal(report.uid, 0)
    }
  })

  it('confined, a process that escaped its isolate reads no workspace, no secret, no home, reaches no network, sees no host process', async (t) => {
    const { report, large } = await runProbe(t, 'bubblewrap')
    assert.match(report.workspace, /^denied: ENOENT/, 'the workspace is not there at all')
    assert.match(report.shadow, /^denied: ENOENT/, '/etc/shadow is not in the allowlist')
    assert.match(report.home, /^denied: ENOENT/)
    assert.match(report.tcp, /^denied: (ECONNREFUSED|ENETUNREACH|EHOSTUNREACH)/)
    assert.equal(report.hostProcessSeen, false)
    assert.ok(report.processes <= 3, `only the sandbox's own processes: ${report.processes}`)
    // bubblewrap sets PWD (`/`) after clearing the rest.
    assert.deepEqual(
      report.environment.filter((name) => name !== 'PWD'),
      [],
    )
    if (IS_ROOT) assert.equal(report.uid, 65534, 'a root server drops the sandbox to nobody')
    // fds 3, 4 and 5 survived bubblewrap (and, from root, the caller's mount step).
    assert.equal(large, 'large lane')
  })

  it("runs the real sandbox there: its Node is bubblewrap's child in a PID namespace, as nobody from root", async () => {
    await using engine = new IsolateEngine()
    const session = await engine.createSession({ memoryLimitMb: 64, namespaces: {} })
    const outcome = await session.eval('6 * 7', { timeoutMs: 10_000 })
    assert.deepEqual(outcome.type === 'value' ? outcome.value : outcome, '42')
    const { pid } = await engine.stats()
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
    // The sandbox's Node, in a PID namespace of its own (two ids), started by bubblewrap.
    assert.equal(path.basename(fs.readlinkSync(`/proc/${pid}/exe`)), 'node')
    assert.match(status, /^NSpid:\s+\d+\s+\d+\s*$/m)
    const parent = /^PPid:\s+(\d+)/m.exec(status)?.[1]
    assert.equal(path.basename(fs.readlinkSync(`/proc/${parent}/exe`)), 'bwrap')
    if (IS_ROOT) assert.match(status, /^Uid:\s+65534\s/m)
  })

  it('fails closed: without bubblewrap no code runs, and the answer says why and how to fix it', async (t) => {
    await using engine = new IsolateEngine({ bwrap: '/nonexistent/bwrap' })
    const error = await engine.createSession({ memoryLimitMb: 64, namespaces: {} }).then(
      () => undefined,
      (caught: unknown) => caught,
    )
    assert.ok(EitriError.isInstance(error), String(error))
    assert.equal(error.code, 'jail_unavailable')
    assert.match(error.message, /inside bubblewrap .*not installed.*apt-get install bubblewrap/)

    // A bubblewrap that cannot make its namespaces: the reason is bubblewrap's own.
    const folder = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-evaljail-bwrap-')))
    t.after(() => fs.rmSync(folder, { recursive: true, force: true }))
    fs.chmodSync(folder, 0o755)
    const broken = path.join(folder, 'bwrap')
    fs.writeFileSync(
      broken,
      '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n',
      { mode: 0o755 },
    )
    await using refused = new IsolateEngine({ bwrap: broken })
    const second = await refused.createSession({ memoryLimitMb: 64, namespaces: {} }).then(
      () => undefined,
      (caught: unknown) => caught,
    )
    assert.ok(EitriError.isInstance(second), String(second))
    assert.equal(second.code, 'jail_unavailable')
    assert.match(second.message, /cannot create a user namespace.*No permissions/)
  })

  it('the opt-out: `confinement: none` runs the sandbox without bubblewrap, only when asked', async () => {
    await using engine = new IsolateEngine({ bwrap: '/nonexistent/bwrap', confinement: 'none' })
    const session = await engine.createSession({ memoryLimitMb: 64, namespaces: {} })
    const outcome = await session.eval('1 + 1', { timeoutMs: 10_000 })
    assert.equal(outcome.type === 'value' ? outcome.value : undefined, '2')
  })

  it('shows the sandbox only Node, its sources and the packages it imports, read-only', () => {
    const binds = sandboxReadable([process.execPath])
    const targets = binds.map((bind) => bind.target)
    const root = path.resolve(import.meta.dirname, '../../..')
    assert.ok(targets.includes(path.join(root, 'src')))
    assert.ok(targets.includes(path.join(root, 'package.json')))
    for (const name of ['isolated-vm', 'node-gyp-build', 'acorn', 'zod'])
      assert.ok(
        targets.includes(path.join(root, 'node_modules', name)),
        `${name} in ${targets.join(', ')}`,
      )
    assert.ok(!targets.includes(root), 'never the whole checkout')
    assert.ok(!targets.includes(path.join(root, 'node_modules')), 'never all of node_modules')
    const args = buildSandboxBwrapArgs(binds, ['node', 'main.js'])
    for (const flag of [
      '--unshare-all',
      '--disable-userns',
      '--new-session',
      '--die-with-parent',
      '--clearenv',
    ])
      assert.ok(args.includes(flag), flag)
    assert.deepEqual(args.slice(args.indexOf('--cap-drop'), args.indexOf('--cap-drop') + 2), [
      '--cap-drop',
      'ALL',
    ])
    assert.ok(!args.includes('--bind'), 'nothing writable but its private /tmp')
    assert.ok(!args.includes('--share-net'))
  })
})
