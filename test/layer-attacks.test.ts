/**
 * Attacks on the layers of decision 0011 (its "Forks"): what a fork's commands write under a
 * `.git` or below an ignored path is moved by the host, as root, into a layer it keeps. A link
 * the jail leaves there must never be followed by that move. Each attack beside its harmless
 * variant, which shows the same steps work where nothing climbs out.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { committedProject, openJailedWorkshop } from './helpers/committed-project.ts'
import type { Workshop } from '../src/workshop/workshop.ts'
import type { Scratch } from './helpers/scratch.ts'

function project(): Promise<Scratch> {
  return committedProject({
    '.gitignore': 'node_modules/\n',
    'src/a.js': 'a\n',
  })
}

const exists = (file: string) =>
  fs.lstat(file).then(
    () => true,
    () => false,
  )

/**
 * A link kept at `link` (ignored as a file, not as a folder), then a folder of the same name
 * with a `.git` inside: the `.git` is set apart and merged into the kept layer through the
 * kept link.
 */
async function plantThroughKeptLink(
  workshop: Workshop,
  linkTarget: string | undefined,
  /**
   * What the second command makes below `link`: a branch in a `.git` folder by default (what a
   * fork's `.git` keeps; a hook is not kept at all, decision 0026).
   */
  make = 'mkdir -p link/.git/refs/heads && echo planted > link/.git/refs/heads/planted',
): Promise<string> {
  assert.equal((await workshop.call('workspace_fork', { name: 'f' })).type, 'success')
  await workshop.call('workspace_use', { fork: 'f' })
  // The fork's own .gitignore: `link` as a file or link is ignored, `link/` as a folder is not.
  const ignore = await workshop.call('write_file', {
    path: '.gitignore',
    content: 'node_modules/\nlink\n!link/\n',
  })
  assert.equal(ignore.type, 'success', ignore.content)
  if (linkTarget !== undefined) {
    const first = await workshop.call('shell', { command: `ln -s '${linkTarget}' link` })
    assert.equal(first.type, 'success', first.content)
  }
  const second = await workshop.call('shell', {
    command: (linkTarget === undefined ? '' : 'rm link && ') + make,
  })
  return `${second.type}: ${second.content}`
}

describe('a fork’s layers under attack', () => {
  it('keeps a nested .git below a folder of the fork in the jail (harmless variant)', async () => {
    await using scratch = await project()
    await using workshop = await openJailedWorkshop(scratch)
    // The same steps without the kept link.
    const made = await plantThroughKeptLink(workshop, undefined)
    assert.match(made, /^success/)
    const seen = await workshop.call('shell', { command: 'cat link/.git/refs/heads/planted' })
    assert.equal(seen.type, 'success', seen.content)
    assert.match(seen.content, /planted/)
    assert.equal(await exists(path.join(scratch.workspace, '.git/refs/heads/planted')), false)
  })

  it('never follows a link the jail kept when it merges a later command’s .git into the kept layer', async () => {
    await using scratch = await project()
    await using workshop = await openJailedWorkshop(scratch)
    // The link points at main's real folder, as the host sees it.
    await plantThroughKeptLink(workshop, scratch.workspace)
    assert.equal(
      await exists(path.join(scratch.workspace, '.git/refs/heads/planted')),
      false,
      'a branch reached main’s repository from a fork',
    )
  })

  it('shows a fork’s folder where main has a file (files replaced by folders)', async () => {
    await using scratch = await project()
    await fs.writeFile(path.join(scratch.workspace, 'd'), 'main file\n')
    await using workshop = await openJailedWorkshop(scratch)
    await workshop.call('workspace_fork', { name: 'f' })
    await workshop.call('workspace_use', { fork: 'f' })
    const made = await workshop.call('shell', { command: 'rm d && mkdir d && echo fork > d/x' })
    assert.equal(made.type, 'success', made.content)
    // The file tools see the fork's folder: the control.
    assert.equal((await workshop.call('read_file', { path: 'd/x' })).content, 'fork\n')
    const seen = await workshop.call('shell', { command: 'cat d/x' })
    assert.equal(seen.content, 'fork\n\n[exit 0]')
  })

  it('leaves out of the jail a fork path the host cannot make, and keeps the fork usable', async () => {
    await using scratch = await project()
    await using workshop = await openJailedWorkshop(scratch)
    await workshop.call('workspace_fork', { name: 'f' })
    await workshop.call('workspace_use', { fork: 'f' })
    // The control: an ordinary deep path builds and runs.
    assert.equal(
      (await workshop.call('write_file', { path: 'a/b/c.txt', content: 'x\n' })).type,
      'success',
    )
    assert.equal((await workshop.call('shell', { command: 'cat a/b/c.txt' })).type, 'success')
    const long = Array.from({ length: 22 }, (_, index) => String(index).padStart(200, 'x')).join(
      '/',
    )
    const wrote = await workshop.call('write_file', { path: `${long}/f.txt`, content: 'x\n' })
    assert.equal(wrote.type, 'success', wrote.content)
    const ran = await workshop.call('shell', { command: 'echo ran' })
    assert.doesNotMatch(ran.content, /eitri-layers-|fault in the tool/, ran.content)
    assert.equal(ran.type, 'success', ran.content)
    // The model is told, once, what its programs cannot see.
    assert.match(
      ran.content,
      /\[not shown in the jail: x+0\/[^\]]*too long for the host/,
      ran.content,
    )
    const again = await workshop.call('shell', { command: 'echo again' })
    assert.doesNotMatch(again.content, /not shown in the jail/, again.content)
  })

  it('never follows a link inside a kept repository when a later repository below it is kept (main, no fork)', async () => {
    await using scratch = await project()
    await using workshop = await openJailedWorkshop(scratch)
    // A repository made in the jail (kept, never written back), holding a link to main's folder.
    const first = await workshop.call('shell', {
      command: `mkdir -p r/objects r/refs && echo 'ref: refs/heads/main' > r/HEAD && ln -s '${scratch.workspace}' r/l`,
    })
    assert.equal(first.type, 'success', first.content)
    assert.match(first.content, /kept in the jail: r:/)
    // The link replaced by a folder holding another new repository: kept below r/l.
    const second = await workshop.call('shell', {
      command:
        'rm r/l && mkdir -p r/l/.git/hooks r/l/.git/objects r/l/.git/refs && echo "ref: refs/heads/main" > r/l/.git/HEAD && echo x > r/l/.git/refs/planted',
    })
    assert.equal(second.type, 'success', second.content)
    // The control: the jail keeps it, as a repository made there.
    assert.match(second.content, /kept in the jail: r\/l\/\.git:/)
    assert.equal(
      await exists(path.join(scratch.workspace, '.git/refs/planted')),
      false,
      'a ref reached main’s repository from a command on main',
    )
  })

  it('refuses in a fork’s file tools what the fork’s jail cannot show: a file over eitri’s private state', async () => {
    await using scratch = await project()
    await using workshop = await openJailedWorkshop(scratch, {
      stateDir: path.join(scratch.workspace, 'tools/state'),
    })
    await workshop.call('workspace_fork', { name: 'f' })
    await workshop.call('workspace_use', { fork: 'f' })
    // The control: a file beside it is fine, and commands run.
    assert.equal(
      (await workshop.call('write_file', { path: 'tool', content: 'x' })).type,
      'success',
    )
    assert.equal((await workshop.call('shell', { command: 'cat tool' })).type, 'success')
    const wrote = await workshop.call('write_file', { path: 'tools', content: 'x' })
    if (wrote.type !== 'success') return // refused up front, naming the path: what we want
    const ran = await workshop.call('shell', { command: 'true' })
    assert.equal(ran.type, 'success', ran.content)
  })

  it('keeps a background job’s view of a fork whole while a later command rewrites the fork’s layer', async () => {
    await using scratch = await project()
    await using workshop = await openJailedWorkshop(scratch)
    await workshop.call('workspace_fork', { name: 'f' })
    await workshop.call('workspace_use', { fork: 'f' })
    await workshop.call('write_file', { path: 'src/a.js', content: 'v1\n' })
    const job = await workshop.call('shell', {
      command: 'for i in $(seq 1 15); do echo "[$(ls src | tr "\\n" ,)]"; sleep 0.2; done',
      background: true,
    })
    assert.equal(job.type, 'success', job.content)
    await new Promise((resolve) => setTimeout(resolve, 800))
    // A tool's write, then a command: the fork's layer is brought in step.
    await workshop.call('write_file', { path: 'src/a.js', content: 'v2\n' })
    assert.equal(
      (await workshop.call('shell', { command: 'cat src/a.js' })).content,
      'v2\n\n[exit 0]',
    )
    let output = ''
    for (let tries = 0; tries < 40 && !/exited/.test(output); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      output += `${(await workshop.call('shell_output', { id: 'job-1' })).content}\n`
    }
    const listings = output.split('\n').filter((line) => /^\[(?:[\w.]+,)*\]$/.test(line))
    assert.equal(listings.length, 15, output)
    // The control is the first listings, taken before the layer changed: src holds a.js.
    assert.equal(listings[0], '[a.js,]')
    assert.deepEqual(
      listings.filter((line) => line !== '[a.js,]'),
      [],
      'the job saw src/ change under it',
    )
  })

  it('never removes what a kept link points to (any file system: the removal needs no rename)', async () => {
    await using scratch = await project()
    await using workshop = await openJailedWorkshop(scratch)
    // A `.git` file below the kept link, where main's folder has its `.git` folder.
    await plantThroughKeptLink(workshop, scratch.workspace, 'mkdir link && echo x > link/.git')
    assert.equal(
      (await fs.lstat(path.join(scratch.workspace, '.git'))).isDirectory(),
      true,
      'main’s .git was replaced from a fork',
    )
  })
})
