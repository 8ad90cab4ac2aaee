/**
 * `eitri mcp-config` prints settings that start a server on the same state as the command line:
 * the server a real MCP client starts from them (in another folder, with another environment)
 * sees the fork, the task and the configuration the terminal made.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { EITRI_BIN, finished } from './helpers/eitri-process.ts'
import { makeScratch } from './helpers/scratch.ts'

/** The environment without eitri's own variables: what an MCP client starts servers with. */
function cleanEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        !entry[0].startsWith('EITRI_') && entry[1] !== undefined,
    ),
  )
}

function eitri(
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [EITRI_BIN, ...args], {
    cwd: options.cwd,
    env: options.env ?? cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return finished(child)
}

/** The command and arguments of the printed `.mcp.json` snippet. */
function settingsOf(printed: string): { command: string; args: string[] } {
  const json = /\{[\s\S]*?\n\}/.exec(printed)?.[0]
  assert.ok(json !== undefined, printed)
  return (JSON.parse(json) as { mcpServers: { eitri: { command: string; args: string[] } } })
    .mcpServers.eitri
}

function text(result: unknown): string {
  const [first] = (result as CallToolResult).content
  return first?.type === 'text' ? first.text : ''
}

describe('eitri mcp-config', () => {
  it('settings whose server uses the state folder, configuration and store of the command line', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'a\n' })
    await fs.writeFile(scratch.configPath, JSON.stringify({ protectedPaths: ['secret/**'] }))
    // A relative store, resolved against the folder the command runs in.
    const flags = [...scratch.flags, '--store', 'sqlite:tasks.sqlite']
    const at = { cwd: scratch.root }
    assert.equal((await eitri(['fork', 'from-terminal', ...flags], at)).status, 0)
    const task = await eitri(
      ['call', 'task_create', '{"title":"made at the terminal"}', ...flags],
      at,
    )
    assert.equal(task.status, 0, task.stderr)
    const printed = await eitri(['mcp-config', ...flags], at)
    assert.equal(printed.status, 0, printed.stderr)
    const settings = settingsOf(printed.stdout)

    const client = new Client({ name: 'eitri-test', version: '1.0.0' })
    await client.connect(
      new StdioClientTransport({
        command: settings.command,
        args: settings.args,
        cwd: os.tmpdir(),
        env: cleanEnv(),
        stderr: 'pipe',
      }),
    )
    try {
      const forks = await client.callTool({ name: 'workspace_list', arguments: {} })
      assert.match(text(forks), /from-terminal/, 'the same state folder')
      const tasks = await client.callTool({ name: 'task_list', arguments: {} })
      assert.match(text(tasks), /made at the terminal/, 'the same store')
      const secret = await client.callTool({
        name: 'write_file',
        arguments: { path: 'secret/key', content: 'x' },
      })
      assert.equal(secret.isError, true, 'the same configuration')
      assert.match(text(secret), /protected/)
    } finally {
      await client.close()
    }
    // Without the flags, the client's server would have used other state.
    assert.ok(!settings.args.some((arg) => arg.includes('.local/state')))
  })

  it('spells out EITRI_STATE_DIR, EITRI_CONFIG and EITRI_STORE, which the client will not have', async () => {
    await using scratch = await makeScratch()
    const printed = await eitri(['mcp-config', '--workspace', scratch.workspace], {
      cwd: scratch.root,
      env: {
        ...cleanEnv(),
        EITRI_STATE_DIR: 'state',
        EITRI_CONFIG: scratch.configPath,
        EITRI_STORE: 'sqlite:from-env.sqlite',
      },
    })
    assert.equal(printed.status, 0, printed.stderr)
    const { args } = settingsOf(printed.stdout)
    const after = (flag: string) => args[args.indexOf(flag) + 1]
    assert.equal(after('--state-dir'), scratch.stateDir)
    assert.equal(after('--config'), scratch.configPath)
    assert.equal(after('--store'), `sqlite:${path.join(scratch.root, 'from-env.sqlite')}`)
    // A flag wins over the environment, as it does for every other command.
    const flagged = await eitri(
      ['mcp-config', '--workspace', scratch.workspace, '--state-dir', 'other'],
      { cwd: scratch.root, env: { ...cleanEnv(), EITRI_STATE_DIR: 'state' } },
    )
    const flaggedArgs = settingsOf(flagged.stdout).args
    assert.equal(
      flaggedArgs[flaggedArgs.indexOf('--state-dir') + 1],
      path.join(scratch.root, 'other'),
    )
  })
})
