/**
 * A real project with dependencies in the jail: its `npm test` (a `node --test` suite importing
 * from `node_modules` and instantiating WebAssembly) passes on main and in a fork, because a
 * fork's programs see main's ignored files below the fork's own changes. An edit in the fork
 * fails a test only there, and the fork's changes are that edit alone.
 *
 * npm runs in the jail as it is: its cache and logs go to the jail's own /tmp
 * (`npm_config_cache`; the home is read-only) and vanish with the jail; `npm test` needs no
 * network.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { openWorkshop, type Workshop } from '../src/workshop/workshop.ts'
import { BROKEN_SUM, makeProjectFixture, type ProjectFixture } from './helpers/project-fixture.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

/** What the test runner's TAP summary says, and how the command exited. */
function outcome(content: string): { pass: number; fail: number; exit: number } {
  const count = (name: string) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(content)?.[1])
  const exit = Number(/^\[exit (\d+)\]$/m.exec(content)?.[1])
  return { pass: count('pass'), fail: count('fail'), exit }
}

const live = (scratch: Scratch, name: string) =>
  fs.readFile(path.join(scratch.workspace, name), 'utf8').catch(() => undefined)

// The steps share one project and one workshop, and run in order: main, the fork, the edit.
describe('a real project with dependencies', { timeout: 120_000 }, () => {
  let scratch: Scratch
  let workshop: Workshop
  let fixture: ProjectFixture
  let mainSum: string | undefined

  const npmTest = async (): Promise<{ pass: number; fail: number; exit: number; text: string }> => {
    const ran = await workshop.call('shell', { command: 'npm test 2>&1' })
    assert.equal(ran.type, 'success', ran.content)
    // npm itself ran the script (not a shell fallback).
    assert.match(ran.content, /^> real-fixture@1\.0\.0 test\n> node --test$/m, ran.content)
    return { ...outcome(ran.content), text: ran.content }
  }

  before(async () => {
    scratch = await makeScratch()
    fixture = makeProjectFixture(scratch.workspace)
    assert.ok(fixture.packageFiles > 3000, `${fixture.packageFiles} files in node_modules`)
    mainSum = await live(scratch, fixture.editable)
    workshop = await openWorkshop({
      workspace: scratch.workspace,
      stateDir: scratch.stateDir,
      configPath: scratch.configPath,
    })
    const jail = await workshop.jail.availability()
    assert.ok(jail.available, jail.available ? '' : `install bubblewrap (${jail.reason})`)
  })

  after(async () => {
    await workshop?.close()
    await scratch?.cleanup()
  })

  it('passes its npm test on main', async () => {
    const run = await npmTest()
    assert.deepEqual([run.pass, run.fail, run.exit], [fixture.tests, 0, 0], run.text)
    // The build step wrote main's live folder; gone again, so the fork's run must make its own.
    assert.equal(await live(scratch, 'dist/report.txt'), 'sum:       6\n')
    await fs.rm(path.join(scratch.workspace, 'dist'), { recursive: true })
  })

  it('fails an npm install from the registry at once, not at the timeout: the jail has no network', async () => {
    const ran = await workshop.call('shell', {
      command: 'npm install left-pad-for-eitri-tests',
      timeout_s: 30,
    })
    assert.doesNotMatch(ran.content, /timed out/, ran.content)
    assert.match(ran.content, /ENOTCACHED/, ran.content)
    // npm's words blame its cache; the answer says the jail has no network, and what to do.
    assert.match(
      ran.content,
      /\[the jail has no network: .*ask the person to run the install .*escalate: \{reason\}/,
      ran.content,
    )
  })

  it('passes the same npm test in a fork, node_modules and .git showing through', async () => {
    assert.equal((await workshop.call('workspace_fork', { name: 'f' })).type, 'success')
    assert.equal((await workshop.call('workspace_use', { fork: 'f' })).type, 'success')
    const run = await npmTest()
    assert.deepEqual([run.pass, run.fail, run.exit], [fixture.tests, 0, 0], run.text)
    // The fork's build output stays in the fork's jail, and the model is told so once.
    assert.match(run.text, /\[kept in the jail: dist: ignored by a \.gitignore/)
    const seen = await workshop.call('shell', { command: 'cat dist/report.txt; git status -s' })
    assert.equal(seen.content, 'sum:       6\n\n[exit 0]')
    await assert.rejects(fs.stat(path.join(scratch.workspace, 'dist')))
    // The control: the fork's own files alone (what a mirror of its history held) fail the
    // suite, so the passing run above used main's node_modules.
    const alone = await workshop.call('shell', {
      command:
        'mkdir /tmp/alone && git ls-files -z | xargs -0 cp --parents -t /tmp/alone && cd /tmp/alone && node --test 2>&1',
    })
    const failed = outcome(alone.content)
    assert.ok(failed.fail > 0 && failed.exit !== 0, alone.content)
    assert.match(alone.content, /Cannot find (package|module) 'tiny-sum'/)
  })

  it('fails one test in the fork only after an edit there, and diffs only that source', async () => {
    const wrote = await workshop.call('write_file', { path: fixture.editable, content: BROKEN_SUM })
    assert.equal(wrote.type, 'success', wrote.content)
    const broken = await npmTest()
    assert.deepEqual([broken.pass, broken.fail, broken.exit], [fixture.tests - 1, 1, 1])
    assert.match(broken.text, /^not ok \d+ - total adds a list$/m)
    assert.equal(broken.text.match(/^not ok /gm)?.length, 1, broken.text)
    // Main: its file untouched, its suite still passing.
    assert.equal(await live(scratch, fixture.editable), mainSum)
    assert.equal((await workshop.call('workspace_use', { fork: 'main' })).type, 'success')
    const onMain = await npmTest()
    assert.deepEqual([onMain.pass, onMain.fail, onMain.exit], [fixture.tests, 0, 0], onMain.text)
    // The fork's changes: the edited source alone (no node_modules, no dist).
    const diff = await workshop.call('workspace_diff', { fork: 'f' })
    assert.equal(diff.type, 'success', diff.content)
    const listed = diff.content.split('\n\n')[0] ?? ''
    assert.equal(listed, `modified ${fixture.editable}`, diff.content)
    assert.doesNotMatch(diff.content, /node_modules|dist\//)
  })

  it('runs WebAssembly with a large memory maximum (the control: an address-space limit breaks it)', async () => {
    assert.equal((await workshop.call('workspace_use', { fork: 'f' })).type, 'success')
    const wasm = 'node --test test/wasm.test.js 2>&1'
    const free = outcome((await workshop.call('shell', { command: wasm })).content)
    assert.deepEqual([free.pass, free.fail, free.exit], [4, 0, 0])
    // The same tests under a 4 GiB address-space limit, as the old jail set: the memories fail.
    const limited = await workshop.call('shell', { command: `ulimit -v 4194304; ${wasm}` })
    assert.deepEqual(
      [outcome(limited.content).pass, outcome(limited.content).fail],
      [2, 2],
      limited.content,
    )
    assert.match(limited.content, /^not ok \d+ - a wasm memory with a 4 GiB maximum/m)
  })
})
