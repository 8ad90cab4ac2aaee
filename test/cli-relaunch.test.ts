/**
 * `eitri` started by the machine's older Node (as `npm link` or a global install starts it)
 * relaunches itself under the Node 24 in eitri's own node_modules, from any folder, passing
 * arguments, streams, exit status and signals through.
 */
import assert from 'node:assert/strict'
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { EITRI_BIN, finished } from './helpers/eitri-process.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'
import { packageInfo } from '../src/util/package-info.ts'

/** The machine's own Node, when it is older than 24 (Debian 12's is 20). */
const OLD_NODE = ['/usr/bin/node', '/usr/local/bin/node'].find((candidate) => {
  try {
    const version = execFileSync(candidate, ['--version'], { encoding: 'utf8' })
    return Number(/^v(\d+)/.exec(version)?.[1]) < 24
  } catch {
    return false
  }
})
const skip = OLD_NODE === undefined ? 'no Node older than 24 on this machine' : false

/** The environment that points eitri at a scratch area without any flag. */
function scratchEnv(scratch: Scratch): NodeJS.ProcessEnv {
  return { ...process.env, EITRI_STATE_DIR: scratch.stateDir, EITRI_CONFIG: scratch.configPath }
}

function run(
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(OLD_NODE ?? 'node', [EITRI_BIN, ...args], { ...options, stdio: 'pipe' })
  child.stdin.end()
  return finished(child)
}

/** Starts `eitri serve --http 0` under the old Node and waits until it listens. */
function startServer(scratch: Scratch): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(OLD_NODE ?? 'node', [EITRI_BIN, 'serve', '--http', '0'], {
      cwd: scratch.workspace,
      env: scratchEnv(scratch),
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
      if (/listening on/.test(stderr)) resolve(child)
    })
    child.once('exit', (code) => reject(new Error(`serve exited (${code}): ${stderr}`)))
  })
}

/** The pids of a process's children. */
function childrenOf(pid: number): number[] {
  const text = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
  return text.trim() === '' ? [] : text.trim().split(/\s+/).map(Number)
}

function alive(pid: number): boolean {
  try {
    // A zombie still has a folder in /proc; its state letter tells.
    return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
}

describe('bin/eitri.js under an older Node', { skip }, () => {
  it('runs from a project folder of its own: --version, exec in that folder, exit status kept', async () => {
    await using scratch = await makeScratch({ 'notes.txt': 'from the project\n' })
    const options = { cwd: scratch.workspace, env: scratchEnv(scratch) }
    const version = await run(['--version'], options)
    assert.deepEqual(version, { status: 0, stdout: `${packageInfo.version}\n`, stderr: '' })
    const exec = await run(['exec', '--', 'bash', '-c', 'cat notes.txt; exit 7'], options)
    assert.equal(exec.status, 7, exec.stderr)
    assert.match(exec.stdout, /^from the project\n/)
    const usage = await run(['bogus'], options)
    assert.equal(usage.status, 2)
    assert.match(usage.stderr, /unknown command 'bogus'/)
  })

  it('npx eitri prints no engine or install-script warning under the older npm', async () => {
    // npm's own script, run by the old Node whatever PATH says (npm test puts Node 24 first).
    const npm = fs.realpathSync((OLD_NODE ?? '').replace(/node$/, 'npm'))
    // A cache of its own, as on a fresh machine: npm exec installs the project into its
    // cache the first time, which is when it checks engines.
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-npm-cache-'))
    const child = spawn(OLD_NODE ?? 'node', [npm, 'exec', '--', 'eitri', '--version'], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, npm_config_cache: cache },
    })
    const result = await finished(child).finally(() =>
      fs.rmSync(cache, { recursive: true, force: true }),
    )
    assert.deepEqual(result, { status: 0, stdout: `${packageInfo.version}\n`, stderr: '' })
  })

  it('without the pinned Node it says what to do instead of failing obscurely', async () => {
    await using scratch = await makeScratch()
    const copy = `${scratch.root}/eitri-copy`
    fs.mkdirSync(`${copy}/bin`, { recursive: true })
    fs.copyFileSync(EITRI_BIN, `${copy}/bin/eitri.js`)
    fs.writeFileSync(`${copy}/package.json`, '{"type":"module"}')
    const result = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const child = spawn(OLD_NODE ?? 'node', [`${copy}/bin/eitri.js`, '--version'], {
        stdio: ['ignore', 'ignore', 'pipe'],
      })
      let stderr = ''
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      child.once('close', (status) => resolve({ status, stderr }))
    })
    assert.equal(result.status, 1)
    assert.match(result.stderr, /needs Node\.js 24 .*Run `npm install` in eitri's folder/)
  })

  it('serves MCP over stdio through the relaunch (the streams pass through)', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'over stdio\n' })
    const client = new Client({ name: 'eitri-test', version: '1.0.0' })
    await client.connect(
      new StdioClientTransport({
        command: OLD_NODE ?? 'node',
        args: [EITRI_BIN, 'serve'],
        cwd: scratch.workspace,
        env: scratchEnv(scratch) as Record<string, string>,
        stderr: 'pipe',
      }),
    )
    try {
      const result = await client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } })
      assert.match(JSON.stringify(result.content), /over stdio/)
    } finally {
      await client.close()
    }
  })

  it('passes SIGTERM on: the Node 24 server ends cleanly and the status is its own', async () => {
    await using scratch = await makeScratch()
    const wrapper = await startServer(scratch)
    const [server] = childrenOf(wrapper.pid ?? 0)
    assert.ok(server !== undefined && alive(server), 'the relaunched server runs')
    assert.match(
      fs.readFileSync(`/proc/${server}/cmdline`, 'utf8'),
      /node_modules\/node\/bin\/node/,
    )
    const done = exited(wrapper)
    wrapper.kill('SIGTERM')
    assert.deepEqual(await done, { code: 0, signal: null })
    assert.equal(alive(server), false)
  })

  it('dies of the signal that ended the server', async () => {
    await using scratch = await makeScratch()
    const wrapper = await startServer(scratch)
    const [server] = childrenOf(wrapper.pid ?? 0)
    const done = exited(wrapper)
    wrapper.kill('SIGHUP')
    assert.deepEqual(await done, { code: null, signal: 'SIGHUP' })
    assert.equal(alive(server ?? 0), false)
  })
})
