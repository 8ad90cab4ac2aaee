/**
 * Attacks on a fork's kept layer (what a fork's commands keep apart under eitri's state
 * folder, fork-keep.ts) from a hostile program in the fork's jail, and the host's own doors to
 * that folder: each with its positive control (the harmless variant works, or the planted
 * thing is really there), then the attack, which must fail.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { createHash } from 'node:crypto'
import { ForkKeepFolder } from '../src/jail/overlay/fork-keep.ts'
import { ownerTag, processStartTime } from '../src/util/owned-folders.ts'
import { DETERMINISTIC_PROGRAMS } from '../src/agent/deterministic-programs.ts'
import type { Program, ProgramFactory } from '../src/agent/program.ts'
import { committedProject, openJailedWorkshop } from './helpers/committed-project.ts'
import { hireOne } from './helpers/hire-one.ts'
import type { Scratch } from './helpers/scratch.ts'
import { eventually, layerFolder, printed } from './helpers/fork-keep-layer.ts'

function project(): Promise<Scratch> {
  return committedProject({
    '.gitignore': 'node_modules/\n*.log\n',
    'README.md': 'readme\n',
    'src/a.js': 'main v1\n',
  })
}

describe('attacks on a fork’s kept layer', () => {
  it('a dead process’s claim is replaced by one live process only', async () => {
    await using scratch = await project()
    const folder = path.join(scratch.stateDir, 'forks', 'f-1', 'jail')
    await fs.mkdir(folder, { recursive: true })
    const dead = '999999999.1'
    await fs.writeFile(path.join(folder, 'owner'), dead)
    // Another process found the same dead claim first and is replacing it now: the claim is
    // its, not this process's too (before, both removed the dead claim and both linked in).
    const replacing = path.join(
      folder,
      `owner.replacing-${createHash('sha256').update(dead).digest('hex').slice(0, 16)}`,
    )
    await fs.writeFile(replacing, `1.${processStartTime(1)}`)
    const keep = { folder, wanted: () => true }
    const refused = ForkKeepFolder.claim(keep, scratch.workspace)
    assert.ok(!(refused instanceof ForkKeepFolder), 'refused while another replaces the claim')
    assert.match(refused.reason, /another eitri process \(pid 1\) has this fork open/)
    assert.equal(await fs.readFile(path.join(folder, 'owner'), 'utf8'), dead)
    // Positive control: a replacer that died too is replaced the same way, and the claim taken.
    await fs.writeFile(replacing, '999999998.1')
    const claimed = ForkKeepFolder.claim(keep, scratch.workspace)
    assert.ok(claimed instanceof ForkKeepFolder, JSON.stringify(claimed))
    assert.equal(await fs.readFile(path.join(folder, 'owner'), 'utf8'), ownerTag())
    assert.deepEqual(
      (await fs.readdir(folder)).filter((name) => name.startsWith('owner')),
      ['owner'],
    )
    await claimed.release()
    assert.ok(!existsSync(path.join(folder, 'owner')))
  })

  it('a setuid or setgid binary a program keeps is no setuid binary on the host’s disk', async () => {
    await using scratch = await project()
    await using workshop = await openJailedWorkshop(scratch)
    const forked = await workshop.call('workspace_fork', { name: 'f' })
    const folder = await layerFolder(scratch, String(forked.metadata['fork']))
    await workshop.call('workspace_use', { fork: 'f' })
    const made = await workshop.call('shell', {
      command:
        'cp /usr/bin/id x.log && chmod 6755 x.log && mkdir logs && cp /usr/bin/id logs/y.log && chmod 4755 logs/y.log && stat -c %a x.log logs/y.log',
    })
    assert.equal(made.type, 'success', made.content)
    // Positive control: the program did set the bits, and both files are kept, still runnable.
    assert.match(made.content, /^6755\n4755\n/)
    for (const kept of ['x.log', 'logs/y.log']) {
      const stat = await fs.stat(path.join(folder, 'kept', kept))
      assert.equal(stat.mode & 0o7777, 0o755, `${kept} keeps its permission bits only`)
    }
    const ran = await workshop.call('shell', { command: './x.log -u && logs/y.log -u' })
    assert.equal(ran.type, 'success', ran.content)
  })

  it('nothing below a name that is not UTF-8 is kept: no setuid binary, no repository’s program', async () => {
    await using scratch = await project()
    await using workshop = await openJailedWorkshop(scratch)
    const forked = await workshop.call('workspace_fork', { name: 'f' })
    const folder = await layerFolder(scratch, String(forked.metadata['fork']))
    await workshop.call('workspace_use', { fork: 'f' })
    // Every door after the upper layer names entries by UTF-8 paths: below such a name they saw
    // nothing, and the kept folder moved in whole, setuid bits and git's hooks and all.
    const script = [
      'mkdir -p node_modules/ok && cp /usr/bin/id node_modules/ok/a && chmod 6755 node_modules/ok/a',
      "d=node_modules/$(printf '\\377')",
      'mkdir -p "$d" && cp /usr/bin/id "$d/b" && chmod 6755 "$d/b"',
      'git init -q "$d/r" && printf \'[core]\\n\\tfsmonitor = "sh -c x"\\n\' >> "$d/r/.git/config"',
      'stat -c %a node_modules/ok/a "$d/b"',
    ].join('\n')
    assert.equal(
      (await workshop.call('write_file', { path: 'make.sh', content: script })).type,
      'success',
    )
    const made = await workshop.call('shell', { command: 'sh make.sh' })
    assert.equal(made.type, 'success', made.content)
    // Positive control: the program set the bits, and the folder with a UTF-8 name is kept.
    assert.match(made.content, /^6755\n6755\n/)
    assert.match(
      made.content,
      /not written back: node_modules\/\uFFFD: its name is not valid UTF-8/,
    )
    const kept = path.join(folder, 'kept', 'node_modules')
    assert.equal((await fs.stat(path.join(kept, 'ok', 'a'))).mode & 0o7777, 0o755)
    assert.deepEqual(
      (await fs.readdir(kept, { encoding: 'buffer' })).map((name) => name.toString('latin1')),
      ['ok'],
      'nothing below the name that is not UTF-8 is on the host’s disk',
    )
  })

  it('a kept folder never hides a file the fork has at its path now', async () => {
    await using scratch = await project()
    await using workshop = await openJailedWorkshop(scratch)
    const forked = await workshop.call('workspace_fork', { name: 'f' })
    const folder = await layerFolder(scratch, String(forked.metadata['fork']))
    await workshop.call('workspace_use', { fork: 'f' })
    // Positive control: an ignored file in a new folder is kept, folder and all.
    const made = await workshop.call('shell', { command: 'mkdir logs && echo x > logs/x.log' })
    assert.equal(made.type, 'success', made.content)
    assert.ok(existsSync(path.join(folder, 'kept', 'logs', 'x.log')))
    assert.equal(printed(await workshop.call('shell', { command: 'cat logs/x.log' })), 'x\n')
    // The fork's own file takes the folder's place: the next command sees the fork's file,
    // not the kept folder, which would hide it in the layer above.
    const replaced = await workshop.call('shell', { command: 'rm -rf logs && echo mine > logs' })
    assert.equal(replaced.type, 'success', replaced.content)
    assert.equal((await workshop.call('read_file', { path: 'logs' })).type, 'success')
    const seen = await workshop.call('shell', { command: 'cat logs' })
    assert.equal(seen.type, 'success', seen.content)
    assert.equal(printed(seen), 'mine\n')
    assert.ok(!existsSync(path.join(folder, 'kept', 'logs')), 'the kept folder went')
    assert.doesNotMatch(await fs.readFile(path.join(folder, 'kept.json'), 'utf8'), /logs/)
    // An ignored file kept, then written through the file tools: the fork's file wins.
    assert.equal((await workshop.call('shell', { command: 'echo jail > top.log' })).type, 'success')
    assert.ok(existsSync(path.join(folder, 'kept', 'top.log')))
    const written = await workshop.call('write_file', { path: 'top.log', content: 'tracked\n' })
    assert.equal(written.type, 'success', written.content)
    assert.equal(printed(await workshop.call('shell', { command: 'cat top.log' })), 'tracked\n')
    assert.ok(!existsSync(path.join(folder, 'kept', 'top.log')), 'the kept file went')
  })

  it('never follows a link a program kept when a layer kept in the temporary folder goes', async () => {
    await using scratch = await project()
    const victim = path.join(scratch.root, 'victim')
    await fs.writeFile(victim, 'mine\n', { mode: 0o600 })
    await using first = await openJailedWorkshop(scratch)
    await first.call('workspace_fork', { name: 'f' })
    await first.call('workspace_use', { fork: 'f' })
    assert.equal((await first.call('shell', { command: 'true' })).type, 'success')
    {
      // The fork is open in another workshop: this one's layer stays in the temporary folder.
      await using second = await openJailedWorkshop(scratch)
      await second.call('workspace_use', { fork: 'f' })
      await second.call('shell', { command: 'echo work/ >> .gitignore' })
      const planted = await second.call('shell', {
        command: `mkdir work && ln -s ${victim} work/work && ls -l work/work`,
      })
      assert.equal(planted.type, 'success', planted.content)
      assert.match(
        planted.content,
        /\[kept in the jail: work: ignored.*gone when this eitri process ends/,
      )
      // Positive control: the link is there, in the kept layer, and reaches the victim.
      assert.match(printed(await second.call('shell', { command: 'readlink work/work' })), /victim/)
    }
    assert.equal((await fs.stat(victim)).mode & 0o777, 0o600, 'the victim’s mode is untouched')
  })

  it('a fork a live process holds is not pruned from under its mounts', async () => {
    await using scratch = await project()
    const later = Date.now() + 2 * 60 * 60 * 1000
    let folder: string
    {
      await using workshop = await openJailedWorkshop(scratch)
      const forked = await workshop.call('workspace_fork', { name: 'idle' })
      folder = await layerFolder(scratch, String(forked.metadata['fork']))
      await workshop.call('workspace_use', { fork: 'idle' })
      // Ignored files only: no change of the fork's, so an idle prune would take it.
      const made = await workshop.call('shell', {
        command: 'mkdir node_modules; echo i > node_modules/i',
      })
      assert.equal(made.type, 'success', made.content)
      assert.ok(existsSync(path.join(folder, 'owner')), 'held while open')
      assert.deepEqual(await workshop.lines.pruneForks(later), [])
      assert.ok(existsSync(path.join(folder, 'kept', 'node_modules', 'i')), 'the layer stays')
      assert.equal(printed(await workshop.call('shell', { command: 'cat node_modules/i' })), 'i\n')
    }
    // Positive control: released, the same prune takes it, layer and all.
    await using again = await openJailedWorkshop(scratch)
    const pruned = await again.lines.pruneForks(later)
    assert.deepEqual(
      pruned.map((fork) => fork.name),
      ['idle'],
    )
    assert.ok(!existsSync(path.dirname(folder)))
  })

  it('a Run’s discarded world closes its jail: its layer goes while the workshop stays open', async () => {
    await using scratch = await project()
    await using workshop = await openJailedWorkshop(scratch, {
      programs: { scripted: programs },
    })
    const session = await workshop.openSession()
    let held: string | undefined
    gate = async (world) => {
      const found = workshop.lines.find(world)
      assert.ok(found !== 'main', 'the Run has a world')
      const folder = await layerFolder(scratch, found.id)
      held = existsSync(path.join(folder, 'kept', 'node_modules', 'i')) ? folder : undefined
    }
    const { outcome } = await hireOne(
      session,
      {
        id: 'builder',
        program: { kind: 'scripted' },
        tools: ['shell'],
        access: 'workspace-write',
        metadata: { program: 'steps' },
      },
      'mkdir node_modules && echo i > node_modules/i',
      'discard',
    )
    assert.equal(outcome.status, 'completed', JSON.stringify(outcome))
    // Positive control: while the Run ran, its world's layer was kept under eitri's state.
    assert.match(String(outcome.value), /^success: /)
    assert.ok(held !== undefined, `the world kept its layer: ${String(outcome.value)}`)
    assert.equal(outcome.settlementStatus, 'discarded', JSON.stringify(outcome))
    await eventually(() => !existsSync(held as string), 'the discarded world’s layer is gone')
    await session.close()
  })
})

/** Awaited after the command, with the Run's world: the test looks meanwhile. */
let gate: ((world: string) => Promise<void>) | undefined

/** Runs its task as one shell command in its world. */
const builder: Program = {
  async run(context) {
    const result = await context.tools.call(
      { name: 'shell', input: { command: String(context.task) } },
      { signal: context.signal },
    )
    await gate?.(context.world)
    return { status: 'completed', value: `${result.type}: ${result.content}` }
  },
}

const programs: ProgramFactory = (def, hire) =>
  def.metadata['program'] === 'steps'
    ? builder
    : (DETERMINISTIC_PROGRAMS['scripted'] as ProgramFactory)(def, hire)
