/**
 * What a fork's commands keep in its jail (a commit in the fork's view of `.git`, ignored
 * outputs such as `node_modules`) outlasts eitri: it lives in the fork's folder under eitri's
 * state, a new workshop or CLI process on the same state finds it again, and it goes when the
 * fork is discarded or merged. One process at a time uses it; another fork never sees it.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { committedProject, openJailedWorkshop } from './helpers/committed-project.ts'
import { runEitri } from './helpers/eitri-process.ts'
import type { Scratch } from './helpers/scratch.ts'
import { eventually, layerFolder, printed } from './helpers/fork-keep-layer.ts'

function project(): Promise<Scratch> {
  return committedProject({
    '.gitignore': 'node_modules/\n',
    'README.md': 'readme\n',
    'src/a.js': 'main v1\n',
    'src/keep.js': 'keep\n',
  })
}

const COMMIT =
  'GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@e GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@e git commit -qam "in the fork"'

describe('a fork’s kept layer', () => {
  it('keeps the fork’s commits and ignored files across a restart, masked as before, until discarded', async () => {
    await using scratch = await project()
    let id: string
    let folder: string
    {
      await using first = await openJailedWorkshop(scratch)
      const forked = await first.call('workspace_fork', { name: 'f' })
      id = String(forked.metadata?.['fork'])
      await first.call('workspace_use', { fork: 'f' })
      const made = await first.call('shell', {
        command: `echo fork > src/a.js && ${COMMIT} && mkdir -p node_modules/x && echo 'module.exports = 1' > node_modules/x/index.js`,
      })
      assert.equal(made.type, 'success', made.content)
      // The model is told they stay with the fork, restarts included.
      assert.match(
        made.content,
        /\[kept in the jail: \.git: git's own files[^\]]*also when eitri restarts/,
      )
      assert.match(
        made.content,
        /\[kept in the jail: node_modules: ignored[^\]]*until the fork is merged or discarded/,
      )
      folder = await layerFolder(scratch, id)
      assert.ok(existsSync(path.join(folder, 'kept', 'node_modules', 'x', 'index.js')))
      assert.ok(existsSync(path.join(folder, 'owner')), 'claimed while open')
    }
    // Closed: the layer stays, unclaimed.
    assert.ok(existsSync(path.join(folder, 'kept', 'node_modules', 'x', 'index.js')))
    assert.ok(!existsSync(path.join(folder, 'owner')))
    // Main moves on meanwhile: a change to a file the fork left alone and a new file.
    await fs.writeFile(path.join(scratch.workspace, 'src/keep.js'), 'main v2\n')
    await fs.writeFile(path.join(scratch.workspace, 'src/new.js'), 'new\n')

    await using second = await openJailedWorkshop(scratch)
    await second.call('workspace_use', { fork: 'f' })
    const after = await second.call('shell', {
      command:
        'git log --format=%s; cat node_modules/x/index.js src/a.js src/keep.js; ls src; git status --porcelain',
    })
    assert.equal(after.type, 'success', after.content)
    assert.equal(
      printed(after),
      'in the fork\nfirst\nmodule.exports = 1\nfork\nkeep\na.js\nkeep.js\n',
    )
    // The jail's mount table names the layer at a neutral path, never eitri's state folder.
    const mounts = await second.call('shell', { command: 'cat /proc/self/mountinfo' })
    assert.match(mounts.content, /lowerdir=[^ ,]*\/keep\/kept:/, 'the kept layer is mounted')
    assert.ok(!mounts.content.includes(scratch.stateDir), mounts.content)
    assert.ok(!mounts.content.includes(scratch.workspace), mounts.content)
    // The layer keeps growing across the restart.
    const more = await second.call('shell', { command: 'echo 2 > node_modules/x/two.js' })
    assert.equal(more.type, 'success', more.content)
    assert.ok(existsSync(path.join(folder, 'kept', 'node_modules', 'x', 'two.js')))

    // Another fork never sees it.
    await second.call('workspace_fork', { name: 'g', from: 'main' })
    await second.call('workspace_use', { fork: 'g' })
    const other = await second.call('shell', {
      command: 'git log --format=%s; ls node_modules 2>&1 || true; cat src/keep.js',
    })
    assert.equal(
      printed(other),
      `first\nls: cannot access 'node_modules': No such file or directory\nmain v2\n`,
    )

    // Discarded: the layer's folder goes.
    const discarded = await second.call('workspace_discard', { fork: 'f' })
    assert.equal(discarded.type, 'success', discarded.content)
    assert.ok(!existsSync(folder), 'the discarded fork’s layer is gone')
    await eventually(
      () => !leftBeside(folder),
      'nothing of the layer is left beside the fork’s record',
    )
  })

  it('is used by one workshop at a time: another keeps its own, and says for how long', async () => {
    await using scratch = await project()
    await using first = await openJailedWorkshop(scratch)
    await first.call('workspace_fork', { name: 'f' })
    await first.call('workspace_use', { fork: 'f' })
    assert.equal(
      (await first.call('shell', { command: 'mkdir node_modules; echo a > node_modules/a' })).type,
      'success',
    )
    await using second = await openJailedWorkshop(scratch)
    await second.call('workspace_use', { fork: 'f' })
    const theirs = await second.call('shell', {
      command: 'mkdir -p node_modules; echo b > node_modules/b; ls node_modules',
    })
    assert.equal(theirs.type, 'success', theirs.content)
    assert.match(
      theirs.content,
      /gone when this eitri process ends \(another workshop of this process has this fork open\)/,
    )
    assert.match(theirs.content, /^b$/m)
    // The first one's layer is untouched.
    assert.equal(printed(await first.call('shell', { command: 'ls node_modules' })), 'a\n')
  })

  it('is found again by each CLI process, and a dead process’s claim and command layers are swept', async () => {
    await using scratch = await project()
    const forked = await runEitri(['fork', 'exp', ...scratch.flags])
    assert.equal(forked.status, 0, forked.stderr)
    const id = forked.stdout.split(' ')[0] ?? ''
    const exec = (command: string) =>
      runEitri(['exec', '--fork', 'exp', ...scratch.flags, '--', 'bash', '-c', command])
    const committed = await exec(
      `echo cli > src/a.js && ${COMMIT} && mkdir node_modules && echo i > node_modules/i`,
    )
    assert.equal(committed.status, 0, committed.stderr)
    // The person at the terminal is told, in the words the shell tool uses, what stays in the fork.
    assert.match(committed.stderr, /^eitri: kept in the jail: \.git: git's own files/m)
    assert.match(committed.stderr, /^eitri: kept in the jail: node_modules: ignored/m)
    assert.doesNotMatch(committed.stdout, /kept in the jail/)
    const folder = await layerFolder(scratch, id)
    // A process killed mid-command: its claim and its command layer stay behind.
    await fs.writeFile(path.join(folder, 'owner'), '999999999.1')
    await fs.mkdir(path.join(folder, 'layers-999999999.1', '1', 'upper'), { recursive: true })
    const later = await exec('git log --format=%s; cat node_modules/i')
    assert.equal(later.status, 0, later.stderr)
    assert.equal(later.stdout, 'in the fork\nfirst\ni\n')
    await eventually(
      () => !existsSync(path.join(folder, 'layers-999999999.1')),
      'the dead command layer is swept',
    )
    assert.ok(!existsSync(path.join(folder, 'owner')))
    // A fork discarded while its layer was left (a process gone before it removed it): swept
    // by the next process that opens the workspace.
    const kept = path.join(folder, 'kept')
    const discarded = await runEitri(['discard', 'exp', ...scratch.flags])
    assert.equal(discarded.status, 0, discarded.stderr)
    assert.ok(!existsSync(folder), 'discard removes the layer')
    await fs.mkdir(path.join(kept, 'left'), { recursive: true })
    assert.equal((await runEitri(['forks', ...scratch.flags])).status, 0)
    await eventually(() => !existsSync(folder), 'the left layer of a discarded fork is swept')
  })

  it('goes when the fork is merged', async () => {
    await using scratch = await project()
    const forked = await runEitri(['fork', 'exp', ...scratch.flags])
    const id = forked.stdout.split(' ')[0] ?? ''
    const made = await runEitri([
      'exec',
      '--fork',
      'exp',
      ...scratch.flags,
      '--',
      'bash',
      '-c',
      'echo merged > src/a.js && mkdir node_modules && echo i > node_modules/i',
    ])
    assert.equal(made.status, 0, made.stderr)
    const folder = await layerFolder(scratch, id)
    assert.ok(existsSync(path.join(folder, 'kept', 'node_modules', 'i')))
    const merged = await runEitri(['merge', 'exp', ...scratch.flags])
    assert.equal(merged.status, 0, merged.stderr)
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'src/a.js'), 'utf8'), 'merged\n')
    assert.ok(!existsSync(folder), 'the merged fork’s layer is gone')
    await eventually(() => !leftBeside(folder), 'nothing of it is left beside the record')
  })

  it('never follows a link the jail kept when the layer is removed', async () => {
    await using scratch = await project()
    const victim = path.join(scratch.root, 'victim')
    await fs.mkdir(victim)
    await fs.writeFile(path.join(victim, 'precious'), 'mine\n')
    await using workshop = await openJailedWorkshop(scratch)
    const forked = await workshop.call('workspace_fork', { name: 'f' })
    const folder = await layerFolder(scratch, String(forked.metadata['fork']))
    await workshop.call('workspace_use', { fork: 'f' })
    const planted = await workshop.call('shell', {
      command: `mkdir -p node_modules/inner && ln -s ${victim} node_modules/out && ln -s ${victim} node_modules/inner/out`,
    })
    assert.equal(planted.type, 'success', planted.content)
    // The links are in the kept layer, pointing at the victim: a removal that followed them
    // would empty it.
    assert.equal(await fs.readlink(path.join(folder, 'kept', 'node_modules', 'out')), victim)
    assert.deepEqual(await fs.readdir(path.join(folder, 'kept', 'node_modules', 'out')), [
      'precious',
    ])
    assert.equal((await workshop.call('workspace_discard', { fork: 'f' })).type, 'success')
    await eventually(() => !leftBeside(folder), 'the layer is removed')
    assert.equal(await fs.readFile(path.join(victim, 'precious'), 'utf8'), 'mine\n')
  })

  it('stays in the temporary folder when eitri’s state lies inside the workspace, and says so', async () => {
    await using scratch = await project()
    // An overlay refuses a layer inside another: main's folder is one.
    await using workshop = await openJailedWorkshop(scratch, {
      stateDir: path.join(scratch.workspace, 'node_modules', '.eitri-state'),
    })
    await workshop.call('workspace_fork', { name: 'f' })
    await workshop.call('workspace_use', { fork: 'f' })
    const made = await workshop.call('shell', {
      command: 'mkdir -p node_modules/x && echo 1 > node_modules/x/i',
    })
    assert.equal(made.type, 'success', made.content)
    assert.match(
      made.content,
      /\[kept in the jail: node_modules: ignored[^\]]*gone when this eitri process ends \(eitri's state folder lies inside the workspace\)/,
    )
    assert.equal(printed(await workshop.call('shell', { command: 'cat node_modules/x/i' })), '1\n')
  })
})

/** Whether anything of a layer folder (a copy being removed) is left beside it. */
function leftBeside(folder: string): boolean {
  try {
    return readdirSync(path.dirname(folder)).some((name) => name.startsWith(path.basename(folder)))
  } catch {
    return false
  }
}
