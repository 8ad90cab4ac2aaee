import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { makeScratch } from '../../test/helpers/scratch.ts'
import { packageInfo } from '../util/package-info.ts'
import { COMMANDS } from './command-table.ts'
import { main } from './main.ts'
import { REGISTERED_TOOL_NAMES } from '../../test/helpers/tool-names.ts'

async function run(argv: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const status = await main(
    argv,
    { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) },
    new AbortController().signal,
  )
  return { status, stdout, stderr }
}

describe('eitri command line', () => {
  it('--version prints the package version', async () => {
    assert.deepEqual(await run(['--version']), {
      status: 0,
      stdout: `${packageInfo.version}\n`,
      stderr: '',
    })
  })

  it('--help lists every command', async () => {
    const { status, stdout } = await run(['--help'])
    assert.equal(status, 0)
    for (const command of ['demo', 'serve', 'tools', 'call', '--state-dir', '--config'])
      assert.match(stdout, new RegExp(command))
  })

  it('the usage line and --help name every command the command table runs', async () => {
    const names = Object.keys(COMMANDS)
    assert.ok(names.includes('exec') && names.includes('merge'), 'the table is read')
    const bare = await run([])
    assert.equal(bare.status, 2)
    const usage = bare.stderr.trimEnd().split('\n')[1] ?? ''
    const listed = /^Usage: eitri <([^>]+)>/.exec(usage)?.[1]?.split('|')
    assert.deepEqual(listed, names, usage)
    const help = (await run(['--help'])).stdout
    for (const name of names)
      assert.match(help, new RegExp(`(eitri|\\|) ${name}\\b`), `--help shows ${name}`)
  })

  for (const [argv, reason] of [
    [['--frobnicate'], /Unknown option '--frobnicate'/],
    [['serve', '--http'], /--http/],
    [['launch'], /unknown command 'launch'/],
    [[], /no command given/],
    [['call'], /call needs a tool name/],
    [['call', 'read_file', '{oops'], /not valid JSON/],
    [['serve', '--http', 'localhost:99999'], /\[HOST:\]PORT/],
    [['serve', '--tools', ','], /at least one tool/],
    [
      ['serve', '--access', 'root'],
      /--access "root" is not one of: read-only, workspace-write, full-access/,
    ],
    [
      ['serve', '--approval', 'sometimes'],
      /--approval "sometimes" is not one of: untrusted, on-request, never/,
    ],
  ] as const) {
    it(`answers ${JSON.stringify(argv)} with one line, usage and status 2`, async () => {
      const { status, stdout, stderr } = await run([...argv])
      assert.equal(status, 2)
      assert.equal(stdout, '')
      const lines = stderr.trimEnd().split('\n')
      assert.equal(lines.length, 2, stderr)
      assert.match(lines[0] ?? '', reason)
      assert.match(lines[1] ?? '', /^Usage: eitri/)
    })
  }

  it('tools lists one line per tool, and --json gives the schemas', async () => {
    await using scratch = await makeScratch()
    const plain = await run(['tools', ...scratch.flags])
    assert.equal(plain.status, 0)
    assert.deepEqual(
      plain.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(/\s+/)[0]),
      [...REGISTERED_TOOL_NAMES],
    )
    const json = JSON.parse(
      (await run(['tools', '--json', ...scratch.flags, '--tools', 'grep'])).stdout,
    ) as Array<Record<string, unknown>>
    assert.deepEqual(
      json.map((tool) => tool['name']),
      ['grep'],
    )
    assert.deepEqual(json[0]?.['input_schema'], json[0]?.['parameters'])
  })

  it('--tools with an unknown name is a usage error that lists the known tools', async () => {
    await using scratch = await makeScratch()
    const { status, stderr } = await run([
      'tools',
      ...scratch.flags,
      '--tools',
      'read_file,teleport',
    ])
    assert.equal(status, 2)
    assert.match(stderr, /Unknown tool: teleport\. Known tools: read_file, write_file/)
  })

  it('call prints the content and exits 0, or prints the error and exits 1', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'alpha\n' })
    assert.deepEqual(await run(['call', 'read_file', '{"path":"a.txt"}', ...scratch.flags]), {
      status: 0,
      stdout: 'alpha\n',
      stderr: '',
    })
    const missing = await run(['call', 'read_file', '{"path":"nope.txt"}', ...scratch.flags])
    assert.equal(missing.status, 1)
    assert.equal(missing.stderr, 'not_found: File not found: nope.txt\n')
    const json = await run(['call', 'read_file', '{"path":"nope.txt"}', '--json', ...scratch.flags])
    assert.equal(json.status, 1)
    assert.equal((JSON.parse(json.stdout) as { code: string }).code, 'not_found')
  })

  it('call acts on the workspace given and nowhere else', async () => {
    await using scratch = await makeScratch()
    const result = await run([
      'call',
      'write_file',
      '{"path":"made/by/call.txt","content":"x"}',
      ...scratch.flags,
    ])
    assert.equal(result.status, 0)
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'made/by/call.txt'), 'utf8'), 'x')
  })

  it('a broken configuration file is reported with its path and field, status 1', async () => {
    await using scratch = await makeScratch()
    await fs.writeFile(
      scratch.configPath,
      JSON.stringify({ protectedPaths: 'secrets/**', colour: 'blue' }),
    )
    const { status, stderr } = await run(['tools', ...scratch.flags])
    assert.equal(status, 1)
    assert.match(stderr, new RegExp(`configuration file ${scratch.configPath} is invalid`))
    assert.match(stderr, /protectedPaths: .*expected array/)
    assert.match(stderr, /Unrecognized key.*colour/)
  })

  it('honours protectedPaths from the configuration file', async () => {
    await using scratch = await makeScratch()
    await fs.writeFile(scratch.configPath, JSON.stringify({ protectedPaths: ['secrets/**'] }))
    const result = await run([
      'call',
      'write_file',
      '{"path":"secrets/key","content":"x"}',
      ...scratch.flags,
    ])
    assert.equal(result.status, 1)
    assert.match(result.stderr, /^protected_path: .*secrets\/\*\*/)
  })

  it('an unknown --mode and an invalid mode in the configuration are clear errors', async () => {
    await using scratch = await makeScratch()
    const unknown = await run(['tools', ...scratch.flags, '--mode', 'yolo'])
    assert.equal(unknown.status, 1)
    assert.match(unknown.stderr, /unknown mode "yolo": available modes: default, plan/)
    await fs.writeFile(
      scratch.configPath,
      JSON.stringify({
        modes: [
          { name: 'default', description: 'x' },
          { name: 'ship', description: 'y', access: 'root' },
        ],
      }),
    )
    const invalid = await run(['tools', ...scratch.flags])
    assert.equal(invalid.status, 1)
    assert.match(invalid.stderr, /"default" is reserved/)
    assert.match(
      invalid.stderr,
      /unknown access "root": one of read-only, workspace-write, full-access/,
    )
  })

  it('a missing workspace folder is an error, not a crash', async () => {
    await using scratch = await makeScratch()
    const { status, stderr } = await run([
      'tools',
      ...scratch.flags,
      '--workspace',
      path.join(scratch.root, 'missing'),
    ])
    assert.equal(status, 1)
    assert.match(stderr, /Workspace folder not found/)
  })

  it('mcp-config prints snippets with the absolute paths of this Node and entry point', async () => {
    const { status, stdout } = await run(['mcp-config', '--workspace', '/srv/project'])
    assert.equal(status, 0)
    const entry = path.resolve(import.meta.dirname, '../../bin/eitri.js')
    assert.ok(
      stdout.includes(
        `claude mcp add eitri -- ${process.execPath} ${entry} serve --workspace /srv/project`,
      ),
      stdout,
    )
    const json = JSON.parse(/\{[\s\S]*?\n\}/.exec(stdout)?.[0] ?? '{}') as {
      mcpServers: { eitri: { command: string; args: string[] } }
    }
    assert.deepEqual(json.mcpServers.eitri, {
      command: process.execPath,
      args: [entry, 'serve', '--workspace', '/srv/project'],
    })
    assert.match(stdout, /\[mcp_servers\.eitri\]\ncommand = ".*"\nargs = \[/)
  })

  it('demo runs every scene as expected', async () => {
    const { status, stdout } = await run(['demo'])
    assert.equal(status, 0, stdout)
    assert.match(stdout, /(\d+) of \1 scenes behaved as expected/)
    assert.doesNotMatch(stdout, /UNEXPECTED/)
    // The team: a join of two completed Runs, a race whose loser is cancelled and discarded,
    // read back from the store over MCP.
    assert.match(
      stdout,
      /\S+: completed, value \{"facts":\["forks are cheap"\]\}\n\s+\S+: completed, value "draft the notes"/,
    )
    const loser = /loser (\S+): cancelled, effects discarded/.exec(stdout)?.[1]
    assert.ok(loser !== undefined, stdout)
    assert.match(
      stdout,
      new RegExp(
        `run_observe \\{"id":"${loser}"\\}\\n.*\\n\\s+${loser} \\[cancelled; effects discarded\\] agent snail`,
      ),
    )
  })
})
