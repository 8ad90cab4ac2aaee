/**
 * `eitri run` and `eitri runs merge|discard` through the real `eitri` process: a Run hired from
 * a roster file, followed on stderr, its value on stdout and its end in the exit status; a
 * review Run settled later by a person; Ctrl-C cancelling a slow Run; a wrong roster refused
 * naming the file, the agent and the field.
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { openStore } from '../src/store/open-store.ts'
import type { RunRecord } from '../src/store/run-record.ts'
import { EITRI_BIN, finished, runEitri } from './helpers/eitri-process.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

const ROSTER = {
  agents: [
    { id: 'echo', program: { kind: 'echo' } },
    { id: 'greeter', program: { kind: 'scripted', result: { greeting: 'hello' }, reply: 'hi' } },
    { id: 'broken', program: { kind: 'scripted', fail: 'the scripted failure' } },
    { id: 'slow', program: { kind: 'scripted', delayMs: 600_000 } },
  ],
}

/** A scratch area with the roster in `roster.json` and a store the test can read. */
async function setUp(scratch: Scratch): Promise<{ flags: string[]; roster: string; url: string }> {
  const roster = path.join(scratch.root, 'roster.json')
  await fs.writeFile(roster, JSON.stringify(ROSTER))
  const url = `sqlite:${path.join(scratch.root, 'runs.sqlite')}`
  return { flags: [...scratch.flags, '--store', url], roster, url }
}

async function runsOf(url: string): Promise<RunRecord[]> {
  await using store = await openStore(url)
  return await store.listRuns()
}

describe('eitri run', () => {
  it('a completed Run exits 0 with its value on stdout and its steps on stderr', async () => {
    await using scratch = await makeScratch()
    const { flags, roster, url } = await setUp(scratch)
    const echo = await runEitri([
      'run',
      '--agent',
      'echo',
      '--task',
      'say this',
      '--roster',
      roster,
      ...flags,
    ])
    assert.equal(echo.status, 0, echo.stderr)
    assert.equal(echo.stdout, 'say this\n')
    const [row] = await runsOf(url)
    assert.ok(row !== undefined)
    assert.deepEqual(
      [
        row.agentId,
        row.status,
        row.settlementStatus,
        row.settlementReason,
        row.actor?.startsWith('s-'),
      ],
      ['echo', 'completed', 'merged', 'no-changes', true],
    )
    assert.match(echo.stderr, new RegExp(`^eitri: echo ${row.id} running$`, 'm'))
    assert.match(
      echo.stderr,
      new RegExp(`^eitri: echo ${row.id} completed → merged \\(no-changes\\)$`, 'm'),
    )

    const structured = await runEitri([
      'run',
      '--agent',
      'greeter',
      '--task',
      'x',
      '--roster',
      roster,
      ...flags,
    ])
    assert.equal(structured.status, 0, structured.stderr)
    assert.deepEqual(JSON.parse(structured.stdout), { greeting: 'hello' })
    const json = await runEitri([
      'run',
      '--agent',
      'greeter',
      '--task',
      'x',
      '--roster',
      roster,
      '--json',
      ...flags,
    ])
    const outcome = JSON.parse(json.stdout) as { status: string; value: unknown; output: string }
    assert.deepEqual(
      [outcome.status, outcome.value, outcome.output],
      ['completed', { greeting: 'hello' }, 'hi'],
    )
  })

  it('a failing Run exits 1 and says why on stderr', async () => {
    await using scratch = await makeScratch()
    const { flags, roster, url } = await setUp(scratch)
    const broken = await runEitri([
      'run',
      '--agent',
      'broken',
      '--task',
      'x',
      '--roster',
      roster,
      ...flags,
    ])
    assert.equal(broken.status, 1, broken.stderr)
    assert.equal(broken.stdout, '')
    assert.match(broken.stderr, /^eitri: Run \S+ failed: the scripted failure$/m)
    const [row] = await runsOf(url)
    assert.deepEqual([row?.status, row?.settlementStatus], ['failed', 'discarded'])
  })

  it('settlement review keeps the fork; eitri runs merge settles it merged, discard removes the fork', async () => {
    await using scratch = await makeScratch()
    const { flags, roster, url } = await setUp(scratch)
    const hire = () =>
      runEitri([
        'run',
        '--agent',
        'echo',
        '--task',
        'x',
        '--settlement',
        'review',
        '--roster',
        roster,
        ...flags,
      ])
    const first = await hire()
    assert.equal(first.status, 0, first.stderr)
    const [kept] = await runsOf(url)
    assert.ok(kept !== undefined)
    assert.deepEqual([kept.settlementStatus, kept.settlementReason], ['review', 'policy'])
    assert.match(
      first.stderr,
      new RegExp(`kept for review \\(policy\\).*eitri runs merge ${kept.id}`),
    )

    const merged = await runEitri(['runs', 'merge', kept.id, ...flags])
    assert.equal(merged.status, 0, merged.stderr)
    assert.match(merged.stdout, /settled as merged/)
    const row = (await runsOf(url)).find((run) => run.id === kept.id)
    assert.deepEqual(
      [row?.settlementStatus, row?.settlementReason],
      ['merged', 'merged-after-review'],
    )
    const again = await runEitri(['runs', 'discard', kept.id, ...flags])
    assert.equal(again.status, 1)
    assert.match(again.stderr, /is settled as merged already; a Run settles once/)

    assert.equal((await hire()).status, 0)
    const second = (await runsOf(url))[0]
    assert.ok(second !== undefined && second.id !== kept.id && second.world !== undefined)
    const forks = async () =>
      JSON.parse((await runEitri(['forks', '--json', ...flags])).stdout) as {
        name: string
        state: string
      }[]
    assert.equal((await forks()).find((fork) => fork.name === second.world)?.state, 'open')
    // Changes in the fork: merging them into main needs a person, and there is no terminal.
    const wrote = await runEitri([
      'call',
      'write_file',
      '{"path":"from-run.txt","content":"x"}',
      '--fork',
      second.world,
      ...flags,
    ])
    assert.equal(wrote.status, 0, wrote.stderr)
    const refused = await runEitri(['runs', 'merge', second.id, ...flags])
    assert.equal(refused.status, 1)
    assert.match(
      refused.stderr,
      new RegExp(
        `Run ${second.id} was not merged: approval-unavailable: .*no terminal to ask on.*It stays in review`,
      ),
    )
    assert.equal(
      (await runsOf(url)).find((run) => run.id === second.id)?.settlementStatus,
      'review',
    )
    await assert.rejects(fs.access(path.join(scratch.workspace, 'from-run.txt')))
    const discarded = await runEitri(['runs', 'discard', second.id, ...flags])
    assert.equal(discarded.status, 0, discarded.stderr)
    assert.match(discarded.stdout, /settled as discarded/)
    assert.equal((await forks()).find((fork) => fork.name === second.world)?.state, 'discarded')
    const gone = (await runsOf(url)).find((run) => run.id === second.id)
    assert.deepEqual(
      [gone?.settlementStatus, gone?.settlementReason],
      ['discarded', 'discarded-after-review'],
    )

    const unknown = await runEitri(['runs', 'merge', 'nope', ...flags])
    assert.equal(unknown.status, 1)
    assert.match(unknown.stderr, /No Run with id "nope"/)
  })

  it('at a terminal, eitri runs merge asks the person before merging a Run’s changes into main', async () => {
    // script(1) gives eitri a terminal; it is in util-linux's bsdutils, which Debian always has.
    assert.equal(
      spawnSync('script', ['--version']).status,
      0,
      'script(1) is missing: install util-linux (Debian: bsdutils) to run this test',
    )
    await using scratch = await makeScratch()
    const { flags, roster, url } = await setUp(scratch)
    const hired = await runEitri([
      'run',
      '--agent',
      'echo',
      '--task',
      'x',
      '--settlement',
      'review',
      '--roster',
      roster,
      ...flags,
    ])
    assert.equal(hired.status, 0, hired.stderr)
    const [run] = await runsOf(url)
    assert.ok(run?.world !== undefined)
    const wrote = await runEitri([
      'call',
      'write_file',
      '{"path":"from-run.txt","content":"x"}',
      '--fork',
      run.world,
      ...flags,
    ])
    assert.equal(wrote.status, 0, wrote.stderr)
    // script(1) runs the command on a pseudo-terminal: the person's answer comes on its stdin.
    const command = [process.execPath, EITRI_BIN, 'runs', 'merge', run.id, ...flags]
      .map((arg) => `'${arg.replaceAll("'", "'\\''")}'`)
      .join(' ')
    const child = spawn('script', ['-qec', command, '/dev/null'], { stdio: 'pipe' })
    const done = finished(child)
    let asked = ''
    let answered = false
    child.stdout.on('data', (chunk: Buffer) => {
      asked += chunk.toString()
      // Once: output after the question (the merge's own lines) must not answer again into a
      // terminal that may have closed by then.
      if (!answered && asked.includes('Approve?')) {
        answered = true
        child.stdin.write('y\r')
      }
    })
    const result = await done
    assert.equal(result.status, 0, asked)
    assert.match(
      asked,
      /merge the world of Run \S+ \(agent echo\) into main \(your live folder\): 1 file: from-run\.txt \(added\)/,
    )
    assert.match(asked, /Merged the changes of Run/)
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'from-run.txt'), 'utf8'), 'x')
    const row = (await runsOf(url))[0]
    assert.deepEqual(
      [row?.settlementStatus, row?.settlementReason],
      ['merged', 'merged-after-review'],
    )
  })

  it('Ctrl-C cancels a slow Run, waits for it to settle and exits 130', async () => {
    await using scratch = await makeScratch()
    const { flags, roster, url } = await setUp(scratch)
    const child = spawn(
      process.execPath,
      [EITRI_BIN, 'run', '--agent', 'slow', '--task', 'x', '--roster', roster, ...flags],
      { stdio: 'pipe' },
    )
    child.stdin.end()
    const done = finished(child)
    await new Promise<void>((resolve, reject) => {
      let stderr = ''
      const timer = setTimeout(() => reject(new Error(`never running: ${stderr}`)), 20_000)
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString()
        if (/slow \S+ running/.test(stderr)) {
          clearTimeout(timer)
          resolve()
        }
      })
    })
    const started = Date.now()
    child.kill('SIGINT')
    const result = await done
    assert.equal(result.status, 130, result.stderr)
    assert.ok(Date.now() - started < 10_000, 'the slow Run stopped at once')
    assert.match(result.stderr, /cancelling Run \S+ and its children/)
    const [row] = await runsOf(url)
    assert.deepEqual(
      [row?.status, row?.settlementStatus, row?.endedAt !== null],
      ['cancelled', 'discarded', true],
    )
  })

  it('a wrong roster, agent or flag is a usage error (exit 2) naming it, and hires nothing', async () => {
    await using scratch = await makeScratch()
    const { flags, url } = await setUp(scratch)
    const bad = path.join(scratch.root, 'bad-roster.json')
    await fs.writeFile(
      bad,
      JSON.stringify({ agents: [{ id: 'writer', program: { kind: 'scripted', repy: 'x' } }] }),
    )
    const misspelt = await runEitri([
      'run',
      '--agent',
      'writer',
      '--task',
      'x',
      '--roster',
      bad,
      ...flags,
    ])
    assert.equal(misspelt.status, 2)
    assert.match(misspelt.stderr, new RegExp(`--roster ${bad}: Roster file ${bad} is invalid`))
    assert.match(
      misspelt.stderr,
      /agents\[0\] \(id "writer"\): agents\[0\]\.program\.repy: unknown key/,
    )

    const missing = await runEitri([
      'run',
      '--agent',
      'x',
      '--task',
      'x',
      '--roster',
      `${bad}.nope`,
      ...flags,
    ])
    assert.equal(missing.status, 2)
    assert.match(missing.stderr, /Roster file not found: \S+bad-roster\.json\.nope/)

    const good = path.join(scratch.root, 'roster.json')
    const unknown = await runEitri([
      'run',
      '--agent',
      'ghost',
      '--task',
      'x',
      '--roster',
      good,
      ...flags,
    ])
    assert.equal(unknown.status, 2)
    assert.match(
      unknown.stderr,
      /--agent ghost: no such agent in \S+roster\.json \(it has broken, echo, greeter, slow\)/,
    )

    const noTask = await runEitri(['run', '--agent', 'echo', ...flags])
    assert.equal(noTask.status, 2)
    assert.match(noTask.stderr, /eitri run needs --task/)
    const policy = await runEitri([
      'run',
      '--agent',
      'echo',
      '--task',
      'x',
      '--settlement',
      'later',
      ...flags,
    ])
    assert.equal(policy.status, 2)
    assert.match(policy.stderr, /--settlement "later" is not one of: automatic, review, discard/)
    const noAgent = await runEitri(['run', '--agent', 'echo', '--task', 'x', ...flags])
    assert.equal(noAgent.status, 2)
    assert.match(
      noAgent.stderr,
      // The configuration has no agents: the shipped ones are there.
      /--agent echo: no such agent in \S+config\.json \(agents\) \(it has coder, reviewer\)/,
    )
    assert.deepEqual(await runsOf(url), [])
  })
})
