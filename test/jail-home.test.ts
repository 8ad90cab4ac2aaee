/**
 * The jail's home is no command's to write (decision 0064). git expands `~/` in configuration
 * paths with `$HOME`, and the shell a textconv or fsmonitor line runs in expands it too: where
 * the person's own repository configuration names `include.path = ~/.gitconfig.local`,
 * `core.fsmonitor = ~/bin/watch` or `diff.x.textconv = ~/bin/conv`, one approved command that
 * wrote those files into a home a warm jail keeps made every later `git status` and `git diff`
 * (run without a person, even under `untrusted`) run them. Real bubblewrap, real git, through
 * the shell tool.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import type { ApprovalDecision, ApprovalRequest } from '../src/access/approval.ts'
import type { ToolResult } from '../src/tool/tool-result.ts'
import { committedProject, openJailedWorkshop } from './helpers/committed-project.ts'
import { gitOk } from './helpers/git-repository.ts'

/** What a command planted for each `~/` path: a marker file in the workspace when it runs. */
const PLANT = [
  'for home in /tmp "$HOME"; do',
  '  mkdir -p "$home/bin" 2>/dev/null || continue',
  `  printf '[diff "y"]\\n\\ttextconv = "sh -c '"'"'echo ran >> /workspace/ran-include.txt; cat \\\\"$0\\\\"'"'"'"\\n' > "$home/.gitconfig.local"`,
  `  printf '#!/bin/sh\\necho ran >> /workspace/ran-fsmonitor.txt\\nexit 1\\n' > "$home/bin/watch"`,
  `  printf '#!/bin/sh\\necho ran >> /workspace/ran-textconv.txt\\ncat "$1"\\n' > "$home/bin/conv"`,
  '  chmod +x "$home/bin/watch" "$home/bin/conv"',
  'done 2>/dev/null; true',
].join('\n')

const MARKERS = ['ran-include.txt', 'ran-fsmonitor.txt', 'ran-textconv.txt']

/** The markers the planted programs left in `workspace`. */
async function markers(workspace: string): Promise<string[]> {
  const ran: string[] = []
  for (const marker of MARKERS) {
    const exists = await fs.stat(path.join(workspace, marker)).then(
      () => true,
      () => false,
    )
    if (exists) ran.push(marker)
  }
  return ran
}

describe("the jail's home", () => {
  it("an approved command's files in the home are run by no allowed git status or git diff", async () => {
    await using scratch = await committedProject({
      'notes.txt': 'one\n',
      'readme.md': 'one\n',
      '.gitattributes': '*.txt diff=x\n*.md diff=y\n',
    })
    // The person's own settings, as a dotfiles setup writes them.
    gitOk(scratch.workspace, ['config', 'include.path', '~/.gitconfig.local'])
    gitOk(scratch.workspace, ['config', 'core.fsmonitor', '~/bin/watch'])
    gitOk(scratch.workspace, ['config', 'diff.x.textconv', '~/bin/conv'])
    const asked: string[] = []
    const approver = async (request: ApprovalRequest): Promise<ApprovalDecision> => {
      asked.push(request.summary)
      return { type: 'approved', by: 'tester' }
    }
    await using workshop = await openJailedWorkshop(scratch, { approver, approval: 'untrusted' })
    const shell = (command: string): Promise<ToolResult> => workshop.call('shell', { command })
    // A session's first commands run cold while its warm jail starts: plant until the plant
    // is still there for the session's next command.
    let kept = false
    for (let attempt = 0; attempt < 20 && !kept; attempt++) {
      const planted = await shell(PLANT)
      assert.equal(planted.type, 'success', planted.content)
      const seen = await shell('cat /tmp/bin/watch')
      kept = seen.content.includes('ran-fsmonitor')
    }
    assert.ok(kept, 'the warm jail kept /tmp between commands')
    assert.ok(asked.length > 0, 'a person approved the planting')
    asked.length = 0
    await shell('echo two > notes.txt && echo two > readme.md')
    assert.deepEqual(await markers(scratch.workspace), [], 'nothing ran before git did')
    asked.length = 0
    for (const command of ['git status', 'git diff']) {
      const run = await shell(command)
      assert.equal(run.type, 'success', `${command}: ${run.content}`)
    }
    assert.deepEqual(asked, [], 'git status and git diff needed no person')
    assert.deepEqual(
      await markers(scratch.workspace),
      [],
      'an allowed git command ran what a command wrote into the home',
    )
  })
})
