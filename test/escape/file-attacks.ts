/**
 * Attacks on the host's files: remounts, secrets, writes outside, links (jail side and host
 * side), hard links and persistence files.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { EitriError } from '../../src/errors/eitri-error.ts'
import { fileToolsOver } from './context.ts'
import {
  brief,
  changes,
  exists,
  put,
  quote,
  read,
  snapshot,
  waitFor,
  type Attack,
  type AttackContext,
} from './helpers.ts'

/** The outside folder bound read-only at /data. */
const dataBind = (ctx: AttackContext) => ({
  binds: [{ source: ctx.outside, target: '/data', writable: false }],
})

/** A shadow(5) line: nine fields (passwd(5) has seven). */
const SHADOW_LINE = /^[a-z_][^:\n]*:[^:\n]*:\d*:\d*:\d*:\d*:[^:\n]*:[^:\n]*:[^:\n]*$/m

export const fileAttacks: readonly Attack[] = [
  {
    id: 1,
    name: 'capability remount of a read-only bind, then a write',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const canary = path.join(ctx.outside, 'canary')
      const jailed = await ctx.jailed(
        'mount -o remount,rw,bind /data; mount -o remount,rw /data; echo pwned > /data/canary',
        dataBind(ctx),
      )
      const jailedReached = fs.existsSync(canary)
      await ctx.plain(`echo pwned > ${quote(canary)}`)
      return {
        control: fs.existsSync(canary),
        jailed: jailedReached,
        detail: `jailed stderr: ${brief(jailed.stderr)}`,
      }
    },
  },
  {
    id: 2,
    name: 'root-owned secret reads: a 0600 file, /etc/shadow, /root',
    // Unprivileged: there are no root secrets it could leak, and its plain control cannot read
    // them either, so the attack has nothing to prove.
    callers: ['root'],
    async run(ctx) {
      put(path.join(ctx.outside, 'secret'), `${ctx.marker}\n`, 0o600)
      const script = 'cat /data/secret /etc/shadow; ls -la /root; cat /root/.bashrc /root/.ssh/*'
      const jailed = await ctx.jailed(`${script} 2>&1`, dataBind(ctx))
      const leaked = (text: string) => text.includes(ctx.marker) || SHADOW_LINE.test(text)
      const plain = await ctx.plain(
        `cat ${quote(path.join(ctx.outside, 'secret'))} /etc/shadow 2>&1`,
      )
      return {
        control: leaked(plain.stdout),
        jailed: leaked(jailed.stdout),
        detail: `jailed: ${brief(jailed.stdout)}`,
      }
    },
  },
  {
    id: 4,
    name: 'writes outside the allowed roots: host path, read-only bind, /usr, /etc, /, $HOME',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const name = `canary-${ctx.marker}`
      const hostTargets = ['/usr', '/etc', '/', os.homedir()].map((folder) =>
        path.join(folder, name),
      )
      const targets = [
        path.join(ctx.outside, 'by-path'),
        '/data/by-bind',
        ...hostTargets,
        `$HOME/${name}`,
      ]
      for (const target of hostTargets) ctx.defer(() => fs.rmSync(target, { force: true }))
      const before = snapshot(ctx.outside)
      const jailed = await ctx.jailed(
        `for t in ${targets.map((t) => (t.startsWith('$') ? `"${t}"` : quote(t))).join(' ')}; do (echo pwned > "$t") 2>/dev/null && echo "wrote $t (inside the jail)"; done`,
        dataBind(ctx),
      )
      const reached = [...changes(before, snapshot(ctx.outside)), ...hostTargets.filter(exists)]
      await ctx.plain(`echo pwned > ${quote(path.join(ctx.outside, 'by-path'))}`)
      return {
        control: exists(path.join(ctx.outside, 'by-path')),
        jailed: reached.length > 0,
        detail: `reached: ${reached.join(', ') || 'nothing'}; jailed said: ${brief(jailed.stdout)}`,
      }
    },
  },
  {
    id: 5,
    name: 'symbolic links out of the workspace, written through from the jail',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      fs.symlinkSync(ctx.outside, path.join(ctx.workspace, 'out'))
      fs.symlinkSync('../outside', path.join(ctx.workspace, 'out-relative'))
      const before = snapshot(ctx.outside)
      const jailed = await ctx.jailed(
        [
          'echo pwned > out/by-link',
          'echo pwned > out-relative/by-relative-link',
          `ln -s ${quote(ctx.outside)} planted && echo pwned > planted/by-planted-link`,
          'mkdir -p "$(readlink out)" && echo pwned > out/after-mkdir',
        ].join('; '),
      )
      const reached = changes(before, snapshot(ctx.outside))
      await ctx.plain('echo pwned > out/by-link')
      return {
        control: exists(path.join(ctx.outside, 'by-link')),
        jailed: reached.length > 0,
        detail: `reached: ${reached.join(', ') || 'nothing'}; jailed stderr: ${brief(jailed.stderr)}`,
      }
    },
  },
  {
    id: 6,
    name: 'links planted by the jail, then followed by the host file tools',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      put(path.join(ctx.outside, 'target.txt'), 'SECRET\n')
      const links = `ln -s ${quote(path.join(ctx.outside, 'target.txt'))} final; ln -s ${quote(path.join(ctx.outside, 'new.txt'))} dangling; ln -s ${quote(ctx.outside)} folder`
      await ctx.jailed(links)
      const before = snapshot(ctx.outside)
      const tool = fileToolsOver(ctx.view)
      const results = [
        await tool('write_file', { path: 'final', content: 'PWNED' }),
        await tool('write_file', { path: 'dangling', content: 'PWNED' }),
        await tool('write_file', { path: 'folder/x.txt', content: 'PWNED' }),
        await tool('edit_file', { path: 'final', old_string: 'SECRET', new_string: 'PWNED' }),
      ]
      const reached = changes(before, snapshot(ctx.outside))
      await ctx.plain(`rm -rf final dangling folder; ${links}`)
      for (const name of ['final', 'dangling', 'folder/x.txt']) {
        fs.writeFileSync(path.join(ctx.workspace, name), 'PWNED')
      }
      return {
        control: changes(before, snapshot(ctx.outside)).length === 3,
        jailed: reached.length > 0,
        detail: `reached: ${reached.join(', ') || 'nothing'}; tools said: ${results.map((r) => (r.type === 'error' ? r.code : 'success')).join(', ')}`,
      }
    },
  },
  {
    id: 6,
    name: 'links a background job plants in the mirror, followed by the sync',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      put(path.join(ctx.workspace, 'a/b.txt'), 'one\n')
      put(path.join(ctx.workspace, 'a/c.txt'), 'one\n')
      put(path.join(ctx.outside, 'c.txt'), 'KEEP\n')
      const before = snapshot(ctx.outside)
      let output = ''
      // A background job replaces its copy of `a` with a link out, after its own sync in.
      const job = await ctx.jail.start({
        command: [
          '/bin/bash',
          '-c',
          `sleep 0.5; rm -rf a && ln -s ${quote(ctx.outside)} a && echo swapped; sleep 30`,
        ],
        access: 'workspace-write',
        onOutput: (_stream, chunk) => (output += chunk.toString()),
      })
      await waitFor(() => output.includes('swapped'), 10_000)
      // The host changes a/b.txt and deletes a/c.txt; the next run syncs both into the mirror.
      const write = await fileToolsOver(ctx.view)('write_file', {
        path: 'a/b.txt',
        content: 'PWNED\n',
      })
      fs.rmSync(path.join(ctx.workspace, 'a/c.txt'))
      let runError = ''
      try {
        await ctx.jailed('true')
      } catch (error) {
        runError = EitriError.isInstance(error) ? error.code : String(error)
      }
      job.process.kill()
      await job.finished
      const reached = changes(before, snapshot(ctx.outside))
      // The control: a plain host write and delete through the same kind of link.
      put(path.join(ctx.outside, 'c-control.txt'), 'KEEP\n')
      const beforeControl = snapshot(ctx.outside)
      fs.mkdirSync(path.join(ctx.base, 'copy'))
      await ctx.plain(`ln -s ${quote(ctx.outside)} ${quote(path.join(ctx.base, 'copy/a'))}`)
      fs.writeFileSync(path.join(ctx.base, 'copy/a/b-control.txt'), 'PWNED\n')
      fs.rmSync(path.join(ctx.base, 'copy/a/c-control.txt'))
      return {
        control: changes(beforeControl, snapshot(ctx.outside)).length === 2,
        jailed: reached.length > 0,
        detail: `swapped: ${output.includes('swapped')}; write_file: ${write.type}; next run: ${runError || 'ran'}; reached: ${reached.join(', ') || 'nothing'}`,
      }
    },
  },
  {
    id: 8,
    name: 'hard links to an outside file, then appended to',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const target = path.join(ctx.outside, 'target.txt')
      put(target, 'original\n', 0o644)
      const jailed = await ctx.jailed(
        `ln /data/target.txt one && echo pwned >> one; ln ${quote(target)} two && echo pwned >> two; cp -l /data/target.txt three && echo pwned >> three`,
        dataBind(ctx),
      )
      const jailedReached = read(target) !== 'original\n'
      await ctx.plain(`ln ${quote(target)} plain && echo pwned >> plain`)
      return {
        control: read(target) !== 'original\n',
        jailed: jailedReached,
        detail: `jailed stderr: ${brief(jailed.stderr)}`,
      }
    },
  },
  {
    id: 10,
    name: 'shell-init and persistence files of a home folder',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const home = path.join(ctx.outside, 'home')
      fs.mkdirSync(home, { mode: 0o755 })
      const files = [
        '.bashrc',
        '.profile',
        '.ssh/authorized_keys',
        '.config/autostart/x.desktop',
        '.config/systemd/user/x.service',
      ]
      const script = (byPath: boolean) =>
        `for f in ${files.join(' ')}; do for t in ~/"$f" ${byPath ? `${quote(home)}/"$f"` : ''}; do (mkdir -p "$(dirname "$t")" && echo pwned >> "$t") 2>/dev/null; done; done`
      await ctx.jailed(script(true), { environment: { HOME: home } })
      const reached = Object.keys(snapshot(home))
      await ctx.plain(script(false), { env: { HOME: home } })
      return {
        control: files.every((file) => exists(path.join(home, file))),
        jailed: reached.length > 0,
        detail: `reached: ${reached.join(', ') || 'nothing'}`,
      }
    },
  },
]
