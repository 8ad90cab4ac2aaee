/**
 * One policy for every door: for a table of paths and commands, the file tools and the jail are
 * exercised for real in each mode, and the effect on disk is what counts.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import type { ApprovalDecision } from '../src/access/approval.ts'
import { openWorkshop, type WorkshopOptions } from '../src/workshop/workshop.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

async function workshopIn(scratch: Scratch, options: Partial<WorkshopOptions> = {}) {
  const workshop = await openWorkshop({
    workspace: scratch.workspace,
    stateDir: scratch.stateDir,
    configPath: scratch.configPath,
    ...options,
  })
  const jail = await workshop.jail.availability()
  if (options.bwrap === undefined)
    assert.ok(
      jail.available,
      jail.available ? '' : `install bubblewrap: apt-get install bubblewrap (${jail.reason})`,
    )
  return workshop
}

const exists = (file: string) =>
  fs.access(file).then(
    () => true,
    () => false,
  )

interface Target {
  readonly name: string
  /** The path as a tool gets it. */
  readonly path: string
  /** Where a successful write would land on the host. */
  readonly host: (scratch: Scratch) => string
  /** Written in the default mode by the file tools and the jail alike? */
  readonly writableByDefault: boolean
}

const TARGETS: readonly Target[] = [
  {
    name: 'a plain file',
    path: 'notes.md',
    host: (s) => path.join(s.workspace, 'notes.md'),
    writableByDefault: true,
  },
  {
    name: 'a nested new file',
    path: 'src/deep/new.ts',
    host: (s) => path.join(s.workspace, 'src/deep/new.ts'),
    writableByDefault: true,
  },
  {
    name: 'a protected file that exists',
    path: '.vscode/settings.json',
    host: (s) => path.join(s.workspace, '.vscode/settings.json'),
    writableByDefault: false,
  },
  {
    name: 'a protected file that does not exist',
    path: '.envrc',
    host: (s) => path.join(s.workspace, '.envrc'),
    writableByDefault: false,
  },
  {
    name: 'a git hook',
    path: '.git/hooks/pre-commit',
    host: (s) => path.join(s.workspace, '.git/hooks/pre-commit'),
    writableByDefault: false,
  },
  {
    name: 'outside by ..',
    path: '../outside.txt',
    host: (s) => path.join(s.root, 'outside.txt'),
    writableByDefault: false,
  },
  {
    name: 'outside through a link',
    path: 'out/escape.txt',
    host: (s) => path.join(s.root, 'elsewhere/escape.txt'),
    writableByDefault: false,
  },
]

async function scratchWithTargets(): Promise<Scratch> {
  const scratch = await makeScratch({
    'notes.md': 'original\n',
    '.vscode/settings.json': '{}',
    '.git/HEAD': 'ref: refs/heads/main\n',
  })
  await fs.mkdir(path.join(scratch.root, 'elsewhere'))
  await fs.symlink(path.join(scratch.root, 'elsewhere'), path.join(scratch.workspace, 'out'))
  return scratch
}

async function contentOf(file: string): Promise<string | undefined> {
  return fs.readFile(file, 'utf8').catch(() => undefined)
}

for (const mode of ['default', 'plan'] as const) {
  describe(`parity in ${mode} mode`, () => {
    for (const target of TARGETS) {
      const expectWrite = mode === 'default' && target.writableByDefault
      it(`${target.name}: write_file and the jail ${expectWrite ? 'both write' : 'both refuse'}`, async () => {
        await using scratch = await scratchWithTargets()
        await using workshop = await workshopIn(scratch, { mode })
        const before = await contentOf(target.host(scratch))
        const viaTool = await workshop.call('write_file', { path: target.path, content: 'by-tool' })
        assert.equal(viaTool.type, expectWrite ? 'success' : 'error', viaTool.content)
        if (!expectWrite && mode === 'plan' && target.writableByDefault)
          assert.equal(viaTool.type === 'error' && viaTool.code, 'read_only_access')
        assert.equal(await contentOf(target.host(scratch)), expectWrite ? 'by-tool' : before)
        const viaJail = await workshop.call('shell', {
          command: `mkdir -p "$(dirname '${target.path}')" 2>/dev/null; printf by-jail > '${target.path}'`,
        })
        assert.equal(viaJail.type, 'success', viaJail.content)
        assert.equal(
          await contentOf(target.host(scratch)),
          expectWrite ? 'by-jail' : before,
          viaJail.content,
        )
      })
    }

    it(`js_eval's fs and room_write ${mode === 'default' ? 'write' : 'refuse'} like write_file`, async () => {
      await using scratch = await scratchWithTargets()
      await using workshop = await workshopIn(scratch, { mode })
      const viaEval = await workshop.call('js_eval', {
        code: "await fs.writeFile('by-eval.txt', 'e'); await fs.writeFile('.envrc', 'x').catch((e) => 'refused')",
      })
      assert.equal(viaEval.type, mode === 'default' ? 'success' : 'error', viaEval.content)
      assert.equal(
        await contentOf(path.join(scratch.workspace, 'by-eval.txt')),
        mode === 'default' ? 'e' : undefined,
      )
      assert.equal(
        await exists(path.join(scratch.workspace, '.envrc')),
        false,
        'a protected path stays closed to the sandbox too',
      )
      const viaRoom = await workshop.call('room_write', {
        files: [{ path: 'by-room.txt', content: 'r' }],
      })
      assert.equal(viaRoom.type, mode === 'default' ? 'success' : 'error', viaRoom.content)
      if (mode === 'plan')
        assert.equal(viaRoom.type === 'error' && viaRoom.code, 'read_only_access')
      assert.equal(
        await contentOf(path.join(scratch.workspace, 'by-room.txt')),
        mode === 'default' ? 'r' : undefined,
      )
      const protectedRoom = await workshop.call('room_write', {
        files: [{ path: '.git/hooks/pre-commit', content: 'x' }],
      })
      assert.equal(protectedRoom.type, 'error')
    })

    it(`a command that creates a file ${mode === 'default' ? 'creates it' : 'cannot create it'}`, async () => {
      await using scratch = await scratchWithTargets()
      await using workshop = await workshopIn(scratch, { mode })
      await workshop.call('shell', { command: 'touch made.txt; rm -f notes.md' })
      assert.equal(await exists(path.join(scratch.workspace, 'made.txt')), mode === 'default')
      assert.equal(await exists(path.join(scratch.workspace, 'notes.md')), mode === 'plan')
    })

    it('reads: a protected file can be read by both; a path outside by neither', async () => {
      await using scratch = await scratchWithTargets()
      await fs.writeFile(path.join(scratch.root, 'elsewhere/secret.txt'), 'SECRET')
      await using workshop = await workshopIn(scratch, { mode })
      assert.equal(
        (await workshop.call('read_file', { path: '.vscode/settings.json' })).content,
        '{}',
      )
      assert.equal(
        (await workshop.call('shell', { command: 'cat .vscode/settings.json' })).content,
        '{}\n\n[exit 0]',
      )
      const outside = await workshop.call('read_file', { path: 'out/secret.txt' })
      assert.equal(outside.type === 'error' && outside.code, 'path_outside_workspace')
      assert.doesNotMatch(
        (await workshop.call('shell', { command: 'cat out/secret.txt' })).content,
        /SECRET/,
      )
    })
  })
}

describe('plan mode refusals name the mode and how to leave it', () => {
  it('write_file answers read_only_access with exit_plan_mode', async () => {
    await using scratch = await scratchWithTargets()
    await using workshop = await workshopIn(scratch, { mode: 'plan' })
    const result = await workshop.call('edit_file', {
      path: 'notes.md',
      old_string: 'original',
      new_string: 'changed',
    })
    assert.equal(result.type === 'error' && result.code, 'read_only_access')
    assert.match(result.content, /plan mode is read-only.*exit_plan_mode/)
  })
})

describe('shell under a cap without the jail', () => {
  it('is hidden from what is offered and refused with the reason', async () => {
    await using scratch = await scratchWithTargets()
    await using workshop = await workshopIn(scratch, { mode: 'plan', bwrap: '/nonexistent/bwrap' })
    const offered = (await workshop.toolset.offeredIn(workshop.context())).map((tool) => tool.name)
    assert.ok(
      !offered.includes('shell') &&
        !offered.includes('shell_output') &&
        offered.includes('read_file'),
      offered.join(','),
    )
    const result = await workshop.call('shell', { command: 'ls' })
    assert.equal(result.type === 'error' && result.code, 'not_available')
    assert.match(
      result.content,
      /^tool "shell" is not available in plan mode: its read-only cap needs the jail, which is unavailable: bubblewrap/,
    )
  })

  it('stays offered without a cap, and fails closed when called', async () => {
    await using scratch = await scratchWithTargets()
    await using workshop = await workshopIn(scratch, { bwrap: '/nonexistent/bwrap' })
    assert.ok(
      (await workshop.toolset.offeredIn(workshop.context())).some((tool) => tool.name === 'shell'),
    )
    const result = await workshop.call('shell', { command: 'ls' })
    assert.equal(result.type === 'error' && result.code, 'jail_unavailable')
  })
})

describe('full access', () => {
  const approveAll = async (): Promise<ApprovalDecision> => ({ type: 'approved', by: 'tester' })

  it('an escalated command runs outside the jail only after approval, labelled dangerous', async () => {
    await using scratch = await scratchWithTargets()
    const asked: string[] = []
    await using workshop = await workshopIn(scratch, {
      access: 'full-access',
      approver: async (request) => {
        asked.push(request.summary)
        return approveAll()
      },
    })
    const jailed = await workshop.call('shell', { command: 'pwd' })
    assert.match(jailed.content, /^\/workspace\n/)
    const outside = await workshop.call('shell', {
      command: 'pwd',
      escalate: { reason: 'needs the real folder' },
    })
    assert.equal(outside.type, 'success', outside.content)
    assert.equal(outside.metadata['dangerous'], true)
    assert.match(outside.content, /ran OUTSIDE the jail/)
    assert.ok(outside.content.includes(scratch.workspace), outside.content)
    assert.match(
      asked[0] ?? '',
      /OUTSIDE the jail, in your folder \(main, not a fork\) \(dangerous\): pwd/,
    )
  })

  it('writes outside the workspace only with approval; without full access never', async () => {
    await using scratch = await scratchWithTargets()
    const target = path.join(scratch.root, 'outside-by-approval.txt')
    await using denied = await workshopIn(scratch, {
      access: 'full-access',
      approver: async () => ({ type: 'denied', by: 'tester' }),
    })
    assert.equal((await denied.call('write_file', { path: target, content: 'x' })).type, 'error')
    assert.equal(await exists(target), false)
    await using narrow = await workshopIn(scratch, { approver: approveAll })
    const refused = await narrow.call('write_file', { path: target, content: 'x' })
    assert.equal(refused.type === 'error' && refused.code, 'path_outside_workspace')
    await using full = await workshopIn(scratch, { access: 'full-access', approver: approveAll })
    assert.equal(
      (await full.call('write_file', { path: target, content: 'approved' })).type,
      'success',
    )
    assert.equal(await contentOf(target), 'approved')
  })
})

describe('protected paths with rules', () => {
  it('need an allow rule, then still ask the approver unless the rule says otherwise', async () => {
    await using scratch = await scratchWithTargets()
    await fs.writeFile(
      scratch.configPath,
      JSON.stringify({
        rules: {
          allow: [
            'write_file(.vscode/settings.json)',
            { rule: 'write_file(.mcp.json)', approval: 'none' },
          ],
        },
      }),
    )
    const asked: string[] = []
    await using workshop = await workshopIn(scratch, {
      approver: async (request) => {
        asked.push(request.summary)
        return { type: 'approved', by: 'tester' }
      },
    })
    assert.equal(
      (await workshop.call('write_file', { path: '.vscode/settings.json', content: '{"a":1}' }))
        .type,
      'success',
    )
    assert.deepEqual(asked, ['write protected .vscode/settings.json'])
    assert.equal(
      (await workshop.call('write_file', { path: '.mcp.json', content: '{}' })).type,
      'success',
    )
    assert.equal(asked.length, 1, 'approval: none skips the question')
    const unruled = await workshop.call('write_file', { path: '.envrc', content: 'x' })
    assert.equal(unruled.type === 'error' && unruled.code, 'protected_path')
    assert.equal(asked.length, 1)
    assert.equal(await contentOf(path.join(scratch.workspace, '.vscode/settings.json')), '{"a":1}')
  })
})
