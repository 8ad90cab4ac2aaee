import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'

/** A child gets this long; a read that waits on a FIFO never ends on its own. */
const CHILD_DEADLINE_MS = 20_000

const MODULES = {
  writeBack: new URL('./write-back.ts', import.meta.url).href,
  keptGit: new URL('./overlay/kept-git.ts', import.meta.url).href,
  tree: new URL('../workspace/directory-tree.ts', import.meta.url).href,
}

/**
 * Runs `code` (an ES module body, `root` bound to the folder) in a Node of its own, so a read
 * that blocks on a FIFO holds that process, not the test's; answers what it printed, or why it
 * did not end.
 */
function inChild(root: string, code: string): string {
  const result = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', `const root = ${JSON.stringify(root)};\n${code}`],
    { encoding: 'utf8', timeout: CHILD_DEADLINE_MS },
  )
  if (result.signal !== null) return `blocked (killed by ${result.signal})`
  return `${result.stdout}${result.stderr}`.trim()
}

function scratch(t: TestContext): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-test-fifo-'))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  fs.mkdirSync(path.join(root, 'repo/.git'), { recursive: true })
  fs.writeFileSync(path.join(root, 'file.txt'), 'plain\n')
  fs.writeFileSync(path.join(root, 'repo/.git/config'), '[core]\n')
  return root
}

/** Makes `relative` a FIFO, as `mkfifo` in the jail does (and as a program may swap one in). */
function fifo(root: string, relative: string): void {
  fs.rmSync(path.join(root, relative), { force: true })
  const made = spawnSync('mkfifo', [path.join(root, relative)])
  assert.equal(made.status, 0, made.stderr?.toString())
}

describe('reading what a program made never waits on a FIFO', () => {
  it('the write-back, the kept git check and the workspace folder read a file; a FIFO is refused at once', (t) => {
    const root = scratch(t)
    const reads = `
      const { readPinned } = await import(${JSON.stringify(MODULES.writeBack)})
      const { readBaseConfig } = await import(${JSON.stringify(MODULES.keptGit)})
      const { DirectoryTree } = await import(${JSON.stringify(MODULES.tree)})
      const said = (value) => value === undefined ? 'none' : Buffer.from(value).toString().trim()
      console.log('write-back:', said(readPinned(root, 'file.txt', 1024)))
      console.log('kept git:', said(readBaseConfig(root, 'repo/.git/config')))
      const tree = new DirectoryTree(root)
      console.log('tree:', await tree.readFile('file.txt').then(said, (error) => 'refused ' + error.code))
    `
    // The control: regular files are read.
    assert.equal(inChild(root, reads), 'write-back: plain\nkept git: [core]\ntree: plain')
    fifo(root, 'file.txt')
    fifo(root, 'repo/.git/config')
    assert.equal(
      inChild(root, reads),
      'write-back: none\nkept git: none\ntree: refused invalid_input',
    )
  })
})
