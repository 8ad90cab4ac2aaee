import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { DirectoryTree } from '../workspace/directory-tree.ts'
import { MAX_ABSOLUTE_WORDS, namedPaths, unconfinedState } from './unconfined-state.ts'

function mainFolder(t: TestContext): DirectoryTree {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-unconfined-')))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  fs.writeFileSync(path.join(root, '.gitignore'), 'local/\nnode_modules/\n')
  fs.mkdirSync(path.join(root, 'local'))
  fs.writeFileSync(path.join(root, 'local/build.sh'), 'echo one\n')
  fs.writeFileSync(path.join(root, 'local/other.sh'), 'echo other\n')
  fs.mkdirSync(path.join(root, 'node_modules/pkg/bin'), { recursive: true })
  fs.mkdirSync(path.join(root, 'node_modules/.bin'))
  fs.writeFileSync(path.join(root, 'node_modules/pkg/bin/tool'), 'echo tool\n')
  fs.symlinkSync('../pkg/bin/tool', path.join(root, 'node_modules/.bin/tool'))
  fs.writeFileSync(path.join(root, 'tracked.sh'), 'echo tracked\n')
  return new DirectoryTree(root)
}

/** The keyed state of `command` (an approval for the session holds while it is the same). */
async function keyed(main: DirectoryTree, command: string): Promise<string> {
  const state = await unconfinedState({ tree: 'T', main, command })
  assert.equal(state.once, false, command)
  return state.files
}

/** Whether `command`'s approval for the session holds for one run only. */
async function once(main: DirectoryTree, command: string): Promise<boolean> {
  const state = await unconfinedState({ tree: 'T', main, command })
  // What is known still counts: main's tree.
  assert.equal(state.files, 'T', command)
  return state.once
}

describe('unconfinedState', () => {
  it('names paths among the words, relative to main, never outside it', () => {
    assert.deepEqual(
      namedPaths(`sh ./local/build.sh --config=/main/a.json && cat "b c" ../up /etc/x`, '/main'),
      ['sh', 'local/build.sh', '--config', 'a.json', 'cat', 'b', 'c', 'b c'],
    )
  })

  it('is main’s tree alone when the command names no ignored path', async (t) => {
    const main = mainFolder(t)
    const keyed = { files: 'T', once: false }
    assert.deepEqual(await unconfinedState({ tree: 'T', main, command: 'sh tracked.sh' }), keyed)
    assert.deepEqual(await unconfinedState({ tree: 'T', main, command: 'sh local/gone.sh' }), keyed)
    const odd = `cat ${'x'.repeat(5000)} a\u0000b`
    assert.deepEqual(await unconfinedState({ tree: 'T', main, command: odd }), keyed)
  })

  it('changes with an ignored file the command names, directly, by folder or through a link', async (t) => {
    const main = mainFolder(t)
    const state = (command: string) => keyed(main, command)
    const commands = ['sh ./local/build.sh', 'cd local && sh build.sh', 'node_modules/.bin/tool']
    const before = await Promise.all(commands.map(state))
    for (const value of before) assert.match(value, /^T ignored:[0-9a-f]{64}$/)
    // The control: unchanged files, the same state.
    assert.deepEqual(await Promise.all(commands.map(state)), before)
    fs.writeFileSync(path.join(main.root, 'local/build.sh'), 'echo two\n')
    fs.writeFileSync(path.join(main.root, 'node_modules/pkg/bin/tool'), 'echo changed\n')
    const after = await Promise.all(commands.map(state))
    for (const [index, value] of after.entries()) assert.notEqual(value, before[index])
  })

  it('changes with a named file main’s tree never holds: in .git, or one snapshots leave out', async (t) => {
    const main = mainFolder(t)
    fs.mkdirSync(path.join(main.root, '.git'))
    fs.writeFileSync(path.join(main.root, '.git/COMMIT_EDITMSG'), 'msg\n')
    fs.mkdirSync(path.join(main.root, 'vendor'))
    fs.writeFileSync(path.join(main.root, 'vendor/build.sh'), 'echo one\n')
    const unconfined = (command: string) =>
      unconfinedState({
        tree: 'T',
        main,
        command,
        leftOut: (relative) => relative.startsWith('vendor/'),
      })
    const commands = ['sh .git/COMMIT_EDITMSG', 'sh vendor/build.sh']
    const before = await Promise.all(commands.map(unconfined))
    for (const state of before) assert.match(state.files, /^T ignored:[0-9a-f]{64}$/)
    fs.writeFileSync(path.join(main.root, '.git/COMMIT_EDITMSG'), 'echo pwned\n')
    fs.writeFileSync(path.join(main.root, 'vendor/build.sh'), 'echo pwned\n')
    const after = await Promise.all(commands.map(unconfined))
    for (const [index, state] of after.entries()) assert.notEqual(state.files, before[index]?.files)
  })

  it('holds once for a command whose names the shell builds (globs, variables)', async (t) => {
    const main = mainFolder(t)
    const state = (command: string) => keyed(main, command)
    for (const command of [
      'sh lo*/build.sh',
      'sh ./loca?/build.sh',
      'sh ./[l]ocal/build.sh',
      'd=local; sh "$d/build.sh"',
      'sh ./{local,x}/build.sh',
      "sh $'lo\\x63al/build.sh'",
      'sh `echo local`/build.sh',
    ]) {
      assert.equal(await once(main, command), true, command)
    }
    // The control: a command that spells its names is keyed, the same while nothing changed.
    assert.equal(await state('sh ./local/build.sh'), await state('sh ./local/build.sh'))
  })

  it('changes with an ignored file named in pieces the shell joins (quotes, backslashes)', async (t) => {
    const main = mainFolder(t)
    const state = (command: string) => keyed(main, command)
    const commands = [
      "sh ./lo''cal/build.sh",
      'sh lo""cal/build.sh',
      'sh ./loc\\al/build.sh',
      "sh lo'cal/bu'ild.sh",
    ]
    const before = await Promise.all(commands.map(state))
    for (const value of before) assert.match(value, /^T ignored:[0-9a-f]{64}$/)
    assert.deepEqual(await Promise.all(commands.map(state)), before)
    fs.writeFileSync(path.join(main.root, 'local/build.sh'), 'echo two\n')
    const after = await Promise.all(commands.map(state))
    for (const [index, value] of after.entries())
      assert.notEqual(value, before[index], commands[index])
  })

  it('holds once for a command that names a path from another folder (.., /proc)', async (t) => {
    // `cd src && sh ../local/build.sh` runs local/build.sh, but the word is relative to src,
    // not to main: read from main's root it leaves main and names nothing, so a jailed
    // rewrite of the script went unseen. So did /proc/self/cwd, which is main for the command.
    const main = mainFolder(t)
    fs.mkdirSync(path.join(main.root, 'src'))
    fs.mkdirSync(path.join(main.root, 'local/sub'))
    const state = (command: string) => keyed(main, command)
    for (const command of [
      'cd src && sh ../local/build.sh',
      'cd local/sub && sh ../build.sh',
      'cd local/sub; sh ..//build.sh',
      'cd src && sh ./../local/build.sh',
      'sh /proc/self/cwd/local/build.sh',
      'sh /proc/thread-self/cwd/local/build.sh',
    ]) {
      assert.equal(await once(main, command), true, command)
    }
    // The control: the same script named from main's root is keyed.
    assert.equal(await state('sh local/build.sh'), await state('sh local/build.sh'))
  })

  it('changes with an ignored file named through a host link to main', async (t) => {
    const main = mainFolder(t)
    const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-outside-')))
    t.after(() => fs.rmSync(outside, { recursive: true, force: true }))
    fs.symlinkSync(main.root, path.join(outside, 'project'))
    const command = `sh ${outside}/project/local/build.sh`
    const state = () => keyed(main, command)
    const before = await state()
    assert.match(before, /^T ignored:[0-9a-f]{64}$/)
    assert.equal(await state(), before)
    fs.writeFileSync(path.join(main.root, 'local/build.sh'), 'echo two\n')
    assert.notEqual(await state(), before)
    // Past the absolute words looked up, nothing is keyed: asked every time.
    const junk = Array.from({ length: MAX_ABSOLUTE_WORDS + 1 }, (_, index) => `/nowhere/${index}`)
    assert.equal(await once(main, `true ${junk.join(' ')}; ${command}`), true)
  })
})
