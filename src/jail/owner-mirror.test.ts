/**
 * A root caller's jail on a mirror (where overlays cannot run) holds only what the workspace's
 * owner may read (decision 0060): the mirror is the jail user's copy, so a file copied there
 * would be readable whatever its mode was on the host.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { DirectoryTree } from '../workspace/directory-tree.ts'
import { closeToOwner, OTHER, OWNED_LAYOUT } from '../workspace/test-owned-workspace.ts'
import { jailFixture } from './test-jail.ts'

const IS_ROOT = process.getuid?.() === 0
/** The workspace made the owner's, with another user's 0600 file and 0700 folder in it. */
function ownedTree(workspace: string): DirectoryTree {
  closeToOwner(workspace)
  return new DirectoryTree(workspace)
}

const bash = (script: string) => ['/bin/bash', '-c', script]

describe(
  'a root caller’s mirror',
  {
    skip: !IS_ROOT && "needs root: a caller that is not root meets the kernel's own refusal",
  },
  () => {
    for (const layers of ['mirror', 'overlay'] as const) {
      it(`on ${layers === 'mirror' ? 'a mirror' : 'an overlay'}, holds what the owner reads and nothing the owner may not`, async (t) => {
        const { jail, workspace } = await jailFixture(
          t,
          { ...OWNED_LAYOUT },
          { layers, treeOf: ownedTree },
        )
        const result = await jail.run({
          command: bash(
            'cat mine.txt open/plain.txt; cat secret.txt; cat private/inner.txt; echo new > open/new.txt; echo end',
          ),
          access: 'workspace-write',
        })
        assert.match(result.stdout, /^mine\nplain\n/)
        assert.doesNotMatch(result.stdout, /SECRET/)
        assert.match(result.stdout, /end\n$/)
        // What the command wrote comes back; the other user's files are as they were.
        assert.equal(fs.readFileSync(path.join(workspace, 'open/new.txt'), 'utf8'), 'new\n')
        assert.equal(fs.readFileSync(path.join(workspace, 'secret.txt'), 'utf8'), 'SECRET-FILE\n')
        assert.equal(fs.statSync(path.join(workspace, 'secret.txt')).uid, OTHER)
        assert.equal(
          fs.readFileSync(path.join(workspace, 'private/inner.txt'), 'utf8'),
          'SECRET-FOLDER\n',
        )
        // Made unreadable after the first copy: the next command no longer sees it, and what it
        // writes where the owner may not write never reaches the host.
        fs.writeFileSync(path.join(workspace, 'open/plain.txt'), 'SECRET-LATER\n')
        fs.chownSync(path.join(workspace, 'open/plain.txt'), OTHER, OTHER)
        fs.chmodSync(path.join(workspace, 'open/plain.txt'), 0o600)
        const later = await jail.run({
          command: bash(
            'cat open/plain.txt; echo x > secret.txt; mkdir -p private; echo x > private/x; echo end',
          ),
          access: 'workspace-write',
        })
        assert.doesNotMatch(later.stdout, /SECRET/)
        assert.match(later.stdout, /end\n$/)
        assert.equal(fs.readFileSync(path.join(workspace, 'secret.txt'), 'utf8'), 'SECRET-FILE\n')
        assert.equal(fs.existsSync(path.join(workspace, 'private/x')), false)
        assert.equal(
          fs.readFileSync(path.join(workspace, 'open/plain.txt'), 'utf8'),
          'SECRET-LATER\n',
        )
      })
    }
  },
)
