/**
 * A root caller's file tools reach only what the workspace's owner could (decision 0060). When
 * eitri runs as root on a folder some user owns, its jail runs programs as that owner without a
 * capability, so a file of another user with mode 0600, or one inside another user's 0700
 * folder, is out of the jail's reach; the file tools, the history's snapshots and so every
 * fork's view of them must be out of reach of it too. Each refusal stands beside its positive
 * control: the owner's own file at the same place is read, written and forked.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { DirectoryTree } from '../src/workspace/directory-tree.ts'
import { closeToOwner, OTHER, OWNED_LAYOUT, OWNER } from '../src/workspace/test-owned-workspace.ts'
import { openJailedWorkshop } from './helpers/committed-project.ts'
import { approveAll } from './helpers/fork-session.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

const IS_ROOT = process.getuid?.() === 0
/** A workspace of {@link OWNED_LAYOUT}, closed as `closeToOwner` says. */
async function ownedWorkspace(): Promise<Scratch> {
  const scratch = await makeScratch({ ...OWNED_LAYOUT })
  closeToOwner(scratch.workspace)
  return scratch
}

const read = (scratch: Scratch, name: string) =>
  fs.readFileSync(path.join(scratch.workspace, name), 'utf8')

describe(
  "a root caller's file tools act as the workspace's owner",
  {
    skip: !IS_ROOT && "needs root: a caller that is not root meets the kernel's own refusal",
  },
  () => {
    it('the jail cannot read another user’s files (the control of what follows)', async () => {
      await using scratch = await ownedWorkspace()
      await using workshop = await openJailedWorkshop(scratch, { approver: approveAll })
      const own = await workshop.call('shell', { command: 'cat mine.txt open/plain.txt' })
      assert.equal(own.type, 'success', own.content)
      assert.match(own.content, /mine\nplain/)
      for (const command of ['cat secret.txt', 'cat private/inner.txt', 'ls private']) {
        const refused = await workshop.call('shell', { command })
        assert.doesNotMatch(refused.content, /SECRET/, command)
        assert.match(refused.content, /Permission denied\n[^]*\[exit [12]\]$/, command)
      }
    })

    it('judges a folder again on a later turn: one closed after a read closes the next', async () => {
      await using scratch = await ownedWorkspace()
      const tree = new DirectoryTree(scratch.workspace)
      assert.equal(Buffer.from(await tree.readFile('open/plain.txt')).toString(), 'plain\n')
      // Another user's now, and closed: the owner may no longer enter it.
      fs.chownSync(path.join(scratch.workspace, 'open'), OTHER, OTHER)
      fs.chmodSync(path.join(scratch.workspace, 'open'), 0o700)
      await new Promise((resolve) => setImmediate(resolve))
      await assert.rejects(tree.readFile('open/plain.txt'), { code: 'permission_denied' })
    })

    it('read_file, grep and glob refuse what the owner cannot read', async () => {
      await using scratch = await ownedWorkspace()
      await using workshop = await openJailedWorkshop(scratch, { approver: approveAll })
      const own = await workshop.call('read_file', { path: 'open/plain.txt' })
      assert.equal(own.type, 'success', own.content)
      for (const name of ['secret.txt', 'private/inner.txt']) {
        const refused = await workshop.call('read_file', { path: name })
        assert.equal(refused.type === 'error' && refused.code, 'permission_denied', refused.content)
        assert.doesNotMatch(refused.content, /SECRET/)
        assert.match(refused.content, new RegExp(name.replace('.', '\\.')))
        assert.match(refused.content, /owner/)
      }
      const grep = await workshop.call('grep', { pattern: 'SECRET|mine|plain' })
      assert.equal(grep.type, 'success', grep.content)
      assert.match(grep.content, /mine\.txt:1:mine/)
      assert.match(grep.content, /open\/plain\.txt:1:plain/)
      assert.doesNotMatch(grep.content, /SECRET/)
      assert.match(grep.content, /\[passed over 1 file the workspace's owner may not read\]/)
      const glob = await workshop.call('glob', { pattern: '**/*.txt' })
      assert.equal(glob.type, 'success', glob.content)
      assert.match(glob.content, /open\/plain\.txt/)
      // The jail's `ls` of the parent shows the folder, never what is in it.
      assert.doesNotMatch(glob.content, /inner\.txt/)
      const inside = await workshop.call('glob', { pattern: '*', path: 'private' })
      assert.equal(inside.type === 'error' && inside.code, 'permission_denied', inside.content)
      assert.doesNotMatch(inside.content, /inner\.txt/)
    })

    it('write_file and edit refuse to replace what the owner cannot write', async () => {
      await using scratch = await ownedWorkspace()
      await using workshop = await openJailedWorkshop(scratch, { approver: approveAll })
      const own = await workshop.call('write_file', { path: 'open/plain.txt', content: 'new\n' })
      assert.equal(own.type, 'success', own.content)
      assert.equal(read(scratch, 'open/plain.txt'), 'new\n')
      for (const name of ['secret.txt', 'private/inner.txt', 'private/new.txt']) {
        const refused = await workshop.call('write_file', { path: name, content: 'overwritten\n' })
        assert.equal(refused.type === 'error' && refused.code, 'permission_denied', refused.content)
      }
      const edit = await workshop.call('edit_file', {
        path: 'secret.txt',
        old_string: 'SECRET',
        new_string: 'overwritten',
      })
      assert.equal(edit.type === 'error' && edit.code, 'permission_denied', edit.content)
      assert.equal(read(scratch, 'secret.txt'), 'SECRET-FILE\n')
      assert.equal(read(scratch, 'private/inner.txt'), 'SECRET-FOLDER\n')
      assert.equal(fs.existsSync(path.join(scratch.workspace, 'private/new.txt')), false)
    })

    it('a fork holds none of what the owner cannot read', async () => {
      await using scratch = await ownedWorkspace()
      await using workshop = await openJailedWorkshop(scratch, { approver: approveAll })
      const forked = await workshop.call('workspace_fork', { name: 'f' })
      assert.equal(forked.type, 'success', forked.content)
      const used = await workshop.call('workspace_use', { fork: 'f' })
      assert.equal(used.type, 'success', used.content)
      const own = await workshop.call('read_file', { path: 'open/plain.txt' })
      assert.equal(own.type, 'success', own.content)
      assert.match(own.content, /plain/)
      for (const name of ['secret.txt', 'private/inner.txt']) {
        const refused = await workshop.call('read_file', { path: name })
        assert.equal(refused.type, 'error', refused.content)
        assert.doesNotMatch(refused.content, /SECRET/)
      }
      const grep = await workshop.call('grep', { pattern: 'SECRET' })
      assert.doesNotMatch(grep.content, /SECRET-/)
      // Its jail sees main's files below the fork's, and the kernel refuses them there too.
      const shell = await workshop.call('shell', { command: 'cat secret.txt private/inner.txt' })
      assert.doesNotMatch(shell.content, /SECRET-/)
      const listed = await workshop.call('shell', { command: 'ls private' })
      assert.doesNotMatch(listed.content, /inner\.txt/)
    })

    it('a fork’s own file below a closed folder opens no door to what main holds there', async () => {
      await using scratch = await ownedWorkspace()
      await using workshop = await openJailedWorkshop(scratch, { approver: approveAll })
      await workshop.call('workspace_fork', { name: 'f' })
      await workshop.call('workspace_use', { fork: 'f' })
      // Positive control: the fork's own file in a folder of main's that is the owner's.
      for (const name of ['open/own.txt', 'private/own.txt']) {
        const written = await workshop.call('write_file', { path: name, content: 'OWN\n' })
        assert.equal(written.type, 'success', written.content)
      }
      const own = await workshop.call('shell', { command: 'cat open/own.txt open/plain.txt' })
      assert.match(own.content, /OWN\nplain/)
      // The layer's folder is the owner's, but the overlay also asks main's folder below it.
      const mine = await workshop.call('shell', { command: 'cat private/own.txt' })
      assert.match(mine.content, /^OWN\n/)
      for (const command of ['cat private/inner.txt', 'ls private']) {
        const shell = await workshop.call('shell', { command })
        assert.doesNotMatch(shell.content, /SECRET-FOLDER|^inner/m, command)
        assert.match(shell.content, /Permission denied/, command)
      }
    })

    it('a file made unreadable after a snapshot leaves the next one, and a fork’s merge cannot replace it', async () => {
      await using scratch = await ownedWorkspace()
      await using workshop = await openJailedWorkshop(scratch, { approver: approveAll })
      const before = await workshop.call('workspace_fork', { name: 'before' })
      assert.equal(before.type, 'success', before.content)
      const plain = path.join(scratch.workspace, 'open/plain.txt')
      fs.writeFileSync(plain, 'SECRET-LATER\n')
      fs.chownSync(plain, OTHER, OTHER)
      fs.chmodSync(plain, 0o600)
      const after = await workshop.call('workspace_fork', { name: 'after' })
      assert.equal(after.type, 'success', after.content)
      await workshop.call('workspace_use', { fork: 'after' })
      const gone = await workshop.call('read_file', { path: 'open/plain.txt' })
      assert.equal(gone.type === 'error' && gone.code, 'not_found', gone.content)
      // The fork writes where main holds the other user's files; merging it back is refused.
      for (const name of ['secret.txt', 'open/plain.txt']) {
        const written = await workshop.call('write_file', {
          path: name,
          content: 'from the fork\n',
        })
        assert.equal(written.type, 'success', written.content)
      }
      const merged = await workshop.call('workspace_merge', {})
      assert.equal(merged.type, 'error', merged.content)
      assert.equal(read(scratch, 'secret.txt'), 'SECRET-FILE\n')
      assert.equal(read(scratch, 'open/plain.txt'), 'SECRET-LATER\n')
    })

    it('a merge writes into another user’s file the owner may write, and changes none of its bits', async () => {
      await using scratch = await ownedWorkspace()
      const shared = path.join(scratch.workspace, 'open/shared.txt')
      fs.writeFileSync(shared, 'shared\n')
      fs.chownSync(shared, OTHER, OTHER)
      fs.chmodSync(shared, 0o666)
      await using workshop = await openJailedWorkshop(scratch, { approver: approveAll })
      await workshop.call('workspace_fork', { name: 'f' })
      await workshop.call('workspace_use', { fork: 'f' })
      for (const name of ['open/plain.txt', 'open/shared.txt']) {
        const written = await workshop.call('write_file', { path: name, content: 'run me\n' })
        assert.equal(written.type, 'success', written.content)
      }
      const made = await workshop.call('shell', {
        command: 'chmod 755 open/plain.txt open/shared.txt && echo ok',
      })
      assert.match(made.content, /^ok/, made.content)
      const merged = await workshop.call('workspace_merge', {})
      assert.equal(merged.type, 'success', merged.content)
      // The positive control: the owner's own file takes the fork's bits.
      assert.equal(fs.statSync(path.join(scratch.workspace, 'open/plain.txt')).mode & 0o777, 0o755)
      // The owner could write the other user's file in place, never change its bits.
      assert.equal(read(scratch, 'open/shared.txt'), 'run me\n')
      const stat = fs.statSync(shared)
      assert.deepEqual([stat.uid, stat.gid, stat.mode & 0o7777], [OTHER, OTHER, 0o666])
    })

    it('what the tools make is the owner’s, so the tools and the jail change it again', async () => {
      await using scratch = await ownedWorkspace()
      await using workshop = await openJailedWorkshop(scratch, { approver: approveAll })
      const made = await workshop.call('write_file', { path: 'new/dir/a.txt', content: 'one\n' })
      assert.equal(made.type, 'success', made.content)
      for (const name of ['new', 'new/dir', 'new/dir/a.txt']) {
        const stat = fs.lstatSync(path.join(scratch.workspace, name))
        assert.deepEqual([stat.uid, stat.gid], [OWNER, OWNER], name)
      }
      const edited = await workshop.call('edit_file', {
        path: 'new/dir/a.txt',
        old_string: 'one',
        new_string: 'two',
      })
      assert.equal(edited.type, 'success', edited.content)
      const second = await workshop.call('write_file', { path: 'new/dir/b.txt', content: 'b\n' })
      assert.equal(second.type, 'success', second.content)
      const jailed = await workshop.call('shell', {
        command: 'echo three >> new/dir/a.txt && echo c > new/dir/c.txt && echo ok',
      })
      assert.equal(jailed.type, 'success', jailed.content)
      assert.equal(read(scratch, 'new/dir/a.txt'), 'two\nthree\n')
      assert.equal(read(scratch, 'new/dir/c.txt'), 'c\n')
    })
  },
)
