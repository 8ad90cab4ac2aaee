/**
 * eitri's state and configuration inside a workspace reached through a symbolic link (a HOME
 * behind a link): no door (file tools, the jail, js_eval's fs, the room tools, the history
 * that forks are made from) reads or writes them, whichever of the two names each path uses.
 * The positive control: the same doors read and write an ordinary file beside them.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { openWorkshop, type Workshop } from '../src/workshop/workshop.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

const CONFIG = '{"protectedPaths":[]}'
const STATE_FILE = '.local/state/eitri/secret.txt'
const CONFIG_FILE = '.config/eitri/config.json'

interface Home {
  readonly real: string
  readonly link: string
}

/** A home folder `real-home` and a link `home` to it, with a configuration in it. */
async function homeBehindLink(scratch: Scratch): Promise<Home> {
  const real = path.join(scratch.root, 'real-home')
  const link = path.join(scratch.root, 'home')
  await fs.mkdir(path.join(real, '.config', 'eitri'), { recursive: true })
  await fs.mkdir(path.join(real, '.local', 'state', 'eitri'), { recursive: true })
  await fs.writeFile(path.join(real, CONFIG_FILE), CONFIG)
  await fs.writeFile(path.join(real, STATE_FILE), 'state\n')
  await fs.writeFile(path.join(real, 'notes.md'), 'notes\n')
  await fs.symlink(real, link)
  return { real, link }
}

const VARIANTS = [
  { name: 'workspace and state through the link', workspace: 'link', state: 'link' },
  { name: 'workspace by its real path, state through the link', workspace: 'real', state: 'link' },
  { name: 'workspace through the link, state by its real path', workspace: 'link', state: 'real' },
] as const

async function open(home: Home, variant: (typeof VARIANTS)[number]): Promise<Workshop> {
  const stateHome = variant.state === 'link' ? home.link : home.real
  const workshop = await openWorkshop({
    workspace: variant.workspace === 'link' ? home.link : home.real,
    stateDir: path.join(stateHome, '.local', 'state', 'eitri'),
    configPath: path.join(stateHome, CONFIG_FILE),
    approver: async () => ({ type: 'approved', by: 'tester' }),
  })
  const jail = await workshop.jail.availability()
  assert.ok(
    jail.available,
    jail.available ? '' : `install bubblewrap: apt-get install bubblewrap (${jail.reason})`,
  )
  return workshop
}

const failed = (result: { type: string }) => result.type === 'error'

describe('state and configuration inside a workspace behind a symbolic link', () => {
  for (const variant of VARIANTS) {
    it(`${variant.name}: no tool reads or writes them`, async () => {
      await using scratch = await makeScratch()
      const home = await homeBehindLink(scratch)
      await using workshop = await open(home, variant)
      const call = (name: string, input: unknown) => workshop.call(name, input)
      for (const file of [STATE_FILE, CONFIG_FILE]) {
        assert.ok(failed(await call('read_file', { path: file })), `read_file ${file}`)
        assert.ok(failed(await call('room_read', { path: file })), `room_read ${file}`)
        assert.ok(
          failed(await call('write_file', { path: file, content: '{"rules":{}}' })),
          `write_file ${file}`,
        )
        const evaluated = await call('js_eval', {
          code: `let read = 'refused'; try { read = await fs.readFile(${JSON.stringify(file)}) } catch {} let wrote = 'refused'; try { await fs.writeFile(${JSON.stringify(file)}, 'x'); wrote = 'wrote' } catch {} read + ' ' + wrote`,
        })
        assert.match(evaluated.content, /refused refused/, `js_eval fs ${file}`)
        const shell = await call('shell', {
          command: `cat ${file} 2>/dev/null || echo unreadable; echo agent > ${file}`,
        })
        assert.match(shell.content, /unreadable/, `shell read ${file}: ${shell.content}`)
      }
      const globbed = await call('glob', { pattern: '**/*', include_hidden: true })
      assert.doesNotMatch(globbed.content, /eitri/, 'glob')
      const grepped = await call('grep', { pattern: 'state|protectedPaths' })
      assert.doesNotMatch(grepped.content, /eitri/, 'grep')
      const listed = await call('shell', { command: 'ls -aR .local .config 2>&1' })
      // The state folder's entries never show (an overlay covers it with an empty folder); the
      // configuration file may show by name (covered with an unreadable one), never its content.
      assert.doesNotMatch(listed.content, /secret/, 'shell ls')
      // Forks are made from main's history: it never holds the state either.
      await call('workspace_fork', { name: 'look' })
      const forkFiles = await call('room_files', { fork: 'look' })
      assert.doesNotMatch(forkFiles.content, /eitri/, 'a fork of main')
      assert.match(forkFiles.content, /notes\.md/)
      // A fork's programs see main's folder below the fork: the state and configuration there
      // are covered as on main, while an ordinary file shows.
      await call('workspace_use', { fork: 'look' })
      const inFork = await call('shell', {
        command: `cat ${STATE_FILE} ${CONFIG_FILE} 2>&1; cat notes.md`,
      })
      // The state folder is covered by an empty folder: its files are not there to read.
      assert.match(inFork.content, /secret\.txt: No such file or directory/, 'shell in a fork')
      assert.match(inFork.content, /config\.json: Permission denied/, 'shell in a fork')
      assert.doesNotMatch(inFork.content, /protectedPaths/, 'shell in a fork')
      assert.match(inFork.content, /^notes$/m)
      await call('workspace_use', { fork: 'main' })
      assert.equal(await fs.readFile(path.join(home.real, CONFIG_FILE), 'utf8'), CONFIG)
      assert.equal(await fs.readFile(path.join(home.real, STATE_FILE), 'utf8'), 'state\n')

      // The positive control: the same doors reach an ordinary file beside them.
      assert.equal((await call('read_file', { path: 'notes.md' })).content, 'notes\n')
      assert.equal((await call('room_read', { path: 'notes.md' })).content, 'notes\n')
      const shell = await call('shell', { command: 'cat notes.md; echo agent > shell.md' })
      assert.match(shell.content, /notes/)
      assert.equal(await fs.readFile(path.join(home.real, 'shell.md'), 'utf8'), 'agent\n')
      const evaluated = await call('js_eval', {
        code: "await fs.writeFile('eval.md', 'x'); await fs.readFile('notes.md')",
      })
      assert.match(evaluated.content, /notes/)
      assert.match((await call('glob', { pattern: '*.md' })).content, /notes\.md/)
    })
  }
})

describe('a configuration that does not exist yet cannot be planted through a link on its way', () => {
  it('refuses links and removals on the way to it, from the tools and from the jail', async () => {
    await using scratch = await makeScratch()
    const real = path.join(scratch.root, 'real-home')
    const link = path.join(scratch.root, 'home')
    await fs.mkdir(path.join(real, '.config'), { recursive: true })
    await fs.mkdir(path.join(real, '.local', 'state', 'eitri'), { recursive: true })
    await fs.symlink(real, link)
    await using workshop = await openWorkshop({
      workspace: link,
      stateDir: path.join(link, '.local', 'state', 'eitri'),
      configPath: path.join(link, CONFIG_FILE),
    })
    const call = (name: string, input: unknown) => workshop.call(name, input)
    // The agent's own configuration, in a folder of its own: allowed, it is an ordinary file.
    const planted = await call('write_file', {
      path: 'elsewhere/config.json',
      content: '{"rules":{"allow":["shell(touch *)"]}}',
    })
    assert.equal(planted.type, 'success', planted.content)
    const viaJail = await call('shell', { command: 'ln -s ../elsewhere .config/eitri' })
    assert.match(viaJail.content, /not written back: \.config\/eitri: .*on the way to eitri/)
    const viaTool = await call('js_eval', {
      code: "await fs.writeFile('.config/x', ''); await fs.remove('.config/x'); 'ok'",
    })
    assert.match(viaTool.content, /ok/, 'an ordinary file on the way may come and go')
    await assert.rejects(fs.lstat(path.join(real, '.config/eitri')))
    // The positive control: the same link elsewhere comes back.
    const control = await call('shell', { command: 'ln -s ../elsewhere .config/other' })
    assert.doesNotMatch(control.content, /not written back/)
    assert.equal(await fs.readlink(path.join(real, '.config/other')), '../elsewhere')
    // A removal on the way (the state folder's parent) is refused too.
    assert.ok(failed(await call('js_eval', { code: "await fs.remove('.local/state')" })))
  })
})
