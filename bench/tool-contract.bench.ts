/**
 * The cost of the tool contract and of MCP stdio, each against what a user would do without it.
 *
 * - read_file through the whole contract (allowlist, validation, path policy, truncation)
 *   against a bare fs.readFile of the same file;
 * - the same call as an MCP stdio round trip to `eitri serve` against the in-process call;
 * - write_file five folders deep in a git repository (the git rule looks at every folder on the
 *   way and at the repository's configuration) against a bare fs.writeFile, and the path
 *   policy's write decision alone against its read decision (which has no git rule).
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { openWorkshop } from '../src/index.ts'
import { medianMicros, micros, report } from './measure.ts'

const ITERATIONS = 2000
const MCP_ITERATIONS = 1000
const EITRI_BIN = fileURLToPath(new URL('../bin/eitri.js', import.meta.url))

const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-bench-'))
try {
  const workspace = path.join(scratch, 'workspace')
  await fs.mkdir(path.join(workspace, 'src'), { recursive: true })
  const file = path.join(workspace, 'src', 'module.ts')
  await fs.writeFile(file, 'export const line = "some typical source text";\n'.repeat(40))
  const flags = [
    '--workspace',
    workspace,
    '--state-dir',
    path.join(scratch, 'state'),
    '--config',
    path.join(scratch, 'config.json'),
  ]
  await using workshop = await openWorkshop({
    workspace,
    stateDir: path.join(scratch, 'state'),
    configPath: path.join(scratch, 'config.json'),
  })
  const input = { path: 'src/module.ts' }

  const bare = await medianMicros(() => fs.readFile(file, 'utf8'), ITERATIONS)
  const bareSync = await medianMicros(async () => readFileSync(file, 'utf8'), ITERATIONS)
  const contract = await medianMicros(() => workshop.call('read_file', input), ITERATIONS)
  report('read_file through the contract', contract, bare, 'bare fs.readFile')
  report('read_file through the contract', contract, bareSync, 'bare fs.readFileSync')
  process.stdout.write(
    `  contract overhead per call: ${micros(contract - bare)} against fs.readFile, ${micros(contract - bareSync)} against fs.readFileSync (goal < 50 µs)\n`,
  )

  execFileSync('git', ['init', '-q'], { cwd: workspace })
  execFileSync('git', ['config', 'core.hooksPath', '.husky'], { cwd: workspace })
  await fs.mkdir(path.join(workspace, 'a/b/c/d'), { recursive: true })
  const deep = path.join(workspace, 'a/b/c/d/file.ts')
  const content = 'export const line = 1\n'.repeat(40)
  const bareWrite = await medianMicros(() => fs.writeFile(deep, content), ITERATIONS)
  const toolWrite = await medianMicros(
    () => workshop.call('write_file', { path: 'a/b/c/d/file.ts', content }),
    ITERATIONS,
  )
  report('write_file 5 folders deep in a git repository', toolWrite, bareWrite, 'bare fs.writeFile')
  const writeDecision = await medianMicros(
    () => workshop.workspace.resolve('a/b/c/d/file.ts', 'write'),
    ITERATIONS,
  )
  const readDecision = await medianMicros(
    () => workshop.workspace.resolve('a/b/c/d/file.ts', 'read'),
    ITERATIONS,
  )
  report(
    'the path policy deciding a write (git rule included)',
    writeDecision,
    readDecision,
    'deciding a read',
  )

  const client = new Client({ name: 'bench', version: '1' })
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [EITRI_BIN, 'serve', ...flags] }),
  )
  try {
    const overMcp = await medianMicros(
      () => client.callTool({ name: 'read_file', arguments: input }),
      MCP_ITERATIONS,
    )
    report('read_file as an MCP stdio round trip', overMcp, contract, 'the same call in-process')
    process.stdout.write(`  MCP stdio round trip median: ${micros(overMcp)} (goal < 1 ms)\n`)
  } finally {
    await client.close()
  }
} finally {
  await fs.rm(scratch, { recursive: true, force: true })
}
