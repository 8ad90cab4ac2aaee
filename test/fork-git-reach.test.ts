/**
 * A fork's kept `.git` must not lead git out of the keep door's reach. `git status` enters
 * every submodule it finds (a gitlink in the index whose folder holds a `.git`) and runs git
 * there, which obeys that repository's own configuration (its fsmonitor, its filters). The
 * keep door judges the configuration of repositories in the workspace; a repository under the
 * warm jail's `/tmp` (the commands' HOME, kept between commands of a session) it never sees.
 * So neither a gitlink whose path leaves the work tree (`../tmp/x/sub` in the index) nor a
 * `core.worktree` moving the work tree there may be kept: an approved command planted one, and
 * every later `git status`, which needs no person, ran the fsmonitor of a repository in /tmp.
 * Real bubblewrap, real git, the warm jail.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ApprovalDecision, ApprovalRequest } from '../src/access/approval.ts'
import type { ToolResult } from '../src/tool/tool-result.ts'
import { committedProject, openJailedWorkshop } from './helpers/committed-project.ts'

/** A repository under /tmp whose fsmonitor leaves a marker in the workspace. */
const PLANT_TMP = [
  'set -e',
  'mkdir -p /tmp/x/sub && cd /tmp/x/sub && git init -q && git commit -q --allow-empty -m s',
  'git config core.fsmonitor "echo ran >> /workspace/ran-sub.txt; false"',
  '',
].join('\n')

/** A gitlink staged at `aa/tmp/x/sub`, then renamed in the index's bytes to `../tmp/x/sub`. */
const PLANT_INDEX = [
  'set -e',
  'git update-index --add --cacheinfo 160000,$(git -C /tmp/x/sub rev-parse HEAD),aa/tmp/x/sub',
  `perl -MDigest::SHA=sha1 -e 'local $/; open F, "<", ".git/index"; binmode F; $d = <F>; close F;` +
    ` $d = substr($d, 0, -20); $d =~ s{aa/tmp/x/sub}{../tmp/x/sub}; open F, ">", ".git/index";` +
    ` binmode F; print F $d . sha1($d); close F'`,
  'git ls-files --stage',
  '',
].join('\n')

/** The work tree moved to /tmp/x, where the gitlink `sub` is the repository planted there. */
const PLANT_WORKTREE = [
  'set -e',
  'git update-index --add --cacheinfo 160000,$(git -C /tmp/x/sub rev-parse HEAD),sub',
  'git config core.worktree /tmp/x',
  '',
].join('\n')

interface Attack {
  readonly name: string
  readonly plant: string
  /** What the planting command's answer says was not kept. */
  readonly notKept: RegExp
}

const ATTACKS: readonly Attack[] = [
  {
    name: 'a gitlink whose path leaves the work tree (../tmp/x/sub in the index)',
    plant: PLANT_INDEX,
    notKept: /\[not written back: \.git\/index: .*\.\.\/tmp\/x\/sub/,
  },
  {
    name: 'core.worktree moving the work tree to /tmp',
    plant: PLANT_WORKTREE,
    notKept: /\[not written back: \.git\/config: .*core\.worktree/,
  },
]

describe('a fork keeps nothing that leads git to a repository outside the workspace', () => {
  for (const attack of ATTACKS) {
    it(`${attack.name}: a later git status runs nothing of a repository in /tmp`, async () => {
      await using scratch = await committedProject({ 'src/a.js': 'main\n' })
      const asked: string[] = []
      const approver = async (request: ApprovalRequest): Promise<ApprovalDecision> => {
        asked.push(request.summary)
        return { type: 'approved', by: 'tester' }
      }
      await using workshop = await openJailedWorkshop(scratch, {
        approver,
        approval: 'untrusted',
      })
      await workshop.call('workspace_fork', { name: 'f' })
      await workshop.call('workspace_use', { fork: 'f' })
      const shell = async (command: string): Promise<string> => {
        const ran: ToolResult = await workshop.call('shell', { command })
        assert.equal(ran.type, 'success', `${command}: ${ran.content}`)
        return ran.content
      }
      // A command runs cold until the session's warm jail is ready, then there, and /tmp
      // outlives it: plant a file until a command finds it.
      let warm = false
      for (let tries = 0; tries < 50 && !warm; tries++) {
        warm = (await shell('ls /tmp; echo x > /tmp/planted')).startsWith('planted\n')
        if (!warm) await new Promise((resolve) => setTimeout(resolve, 100))
      }
      assert.ok(warm, "the session's commands never shared a warm jail")
      await workshop.call('write_file', { path: 'plant-tmp.sh', content: PLANT_TMP })
      await workshop.call('write_file', { path: 'plant.sh', content: attack.plant })
      await shell('sh plant-tmp.sh')
      // Positive control: git in that repository runs its fsmonitor.
      await shell('cd /tmp/x/sub && git status --short')
      assert.match(await shell('cat ran-sub.txt && rm ran-sub.txt'), /^ran$/m)
      const planted = await shell('sh plant.sh')
      assert.match(planted, attack.notKept)
      asked.length = 0
      const status = await shell('git status')
      assert.deepEqual(asked, [], 'git status needed no person')
      assert.doesNotMatch(await shell('ls; true'), /ran-sub/, status)
      // The repository in /tmp is still there: what kept it out of reach is the keep door.
      assert.match(await shell('test -d /tmp/x/sub/.git && echo there'), /^there$/m)
    })
  }
})
