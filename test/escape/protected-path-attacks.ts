/**
 * Attacks on protected paths (the places a host later runs code from): replacing them,
 * creating them, tool parity with the jail, and odd repository layouts.
 */
import fs from 'node:fs'
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
  STARTED,
  type Attack,
  type AttackContext,
} from './helpers.ts'

export const protectedPathAttacks: readonly Attack[] = [
  {
    id: 7,
    name: 'replacing protected paths: links, rm -rf and mv, then recreating them',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      put(path.join(ctx.workspace, '.git/HEAD'), 'ref: refs/heads/main\n')
      put(path.join(ctx.workspace, '.git/config'), '[core]\n')
      put(path.join(ctx.workspace, '.git/hooks/pre-commit'), 'original\n', 0o755)
      put(path.join(ctx.workspace, 'decoy/hooks/pre-commit'), '#!/bin/sh\necho decoy\n', 0o755)
      const script = [
        'rm -rf .git/hooks; ln -s ../decoy/hooks .git/hooks',
        'mv .git/hooks .git/hooks-old; mkdir .git/hooks; echo evil > .git/hooks/pre-commit',
        'echo evil > .git/config',
        'mv .git .git-old; mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit',
        'rm -rf .git; ln -s decoy .git',
        'rm -rf .vscode; mkdir .vscode; echo {} > .vscode/tasks.json',
        'mv .vscode .vscode-old; ln -s decoy .vscode; echo {} > .vscode/tasks.json',
      ]
        .map((line) => `(${line}) 2>/dev/null`)
        .join('; ')
      const tampered = (): string[] => {
        const at = (relative: string) =>
          fs.lstatSync(path.join(ctx.workspace, relative), { throwIfNoEntry: false })
        const found: string[] = []
        const real = (relative: string): string | undefined => {
          try {
            return fs.realpathSync(path.join(ctx.workspace, relative))
          } catch {
            return undefined
          }
        }
        // A copy of the repository's files elsewhere is harmless (an overlay's `mv` copies a
        // folder it cannot rename) unless git would use it as a repository.
        const isRepository = (relative: string): boolean =>
          at(`${relative}/HEAD`) !== undefined &&
          (at(`${relative}/commondir`) !== undefined ||
            (at(`${relative}/objects`) !== undefined && at(`${relative}/refs`) !== undefined))
        if (at('.git')?.isDirectory() !== true || isRepository('.git-old'))
          found.push('.git replaced')
        if (
          at('.git/hooks')?.isDirectory() !== true ||
          real('.git/hooks') !== path.join(fs.realpathSync(ctx.workspace), '.git/hooks') ||
          at('.git/hooks-old') !== undefined
        )
          found.push('.git/hooks replaced')
        if (read(path.join(ctx.workspace, '.git/hooks/pre-commit')) !== 'original\n')
          found.push('pre-commit changed')
        if (read(path.join(ctx.workspace, '.git/config')) !== '[core]\n')
          found.push('.git/config changed')
        if (at('.vscode') !== undefined) found.push('.vscode created')
        return found
      }
      await ctx.jailed(script)
      const reached = tampered()
      await ctx.plain(script)
      const control = tampered()
      return {
        control: control.length === 5,
        jailed: reached.length > 0,
        detail: `jailed: ${reached.join(', ') || 'nothing'}; control: ${control.join(', ')}`,
      }
    },
  },

  {
    id: 9,
    name: 'creating protected files that do not exist yet, at the root and in a nested repository',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      put(path.join(ctx.workspace, '.git/HEAD'), 'ref: refs/heads/main\n')
      // Protected at any depth: git, direnv and editors act on a nested repository too.
      const files = [...PROTECTED, ...PROTECTED.map((relative) => `sub/${relative}`)]
      const script = `git init -q sub; for p in ${files.join(' ')}; do (mkdir -p "$(dirname "$p")"; printf '[core]\\n\\tfsmonitor = "touch /tmp/pwned"\\n' > "$p") 2>/dev/null && echo "wrote $p"; done`
      // Placeholders the jail mounts may stay, empty, while a warm jail lives: only the
      // attacker's content counts.
      const written = () =>
        files.filter((file) => read(path.join(ctx.workspace, file))?.includes('fsmonitor'))
      const jailed = await ctx.jailed(script)
      const reached = written()
      await ctx.plain(script)
      return {
        control:
          written().length === files.length ||
          (console.error(files.filter((f) => !written().includes(f))), false),
        jailed: reached.length > 0,
        detail: `on the host after the jail: ${reached.join(', ') || 'nothing'}; the jail believed it wrote: ${brief(jailed.stdout.replace(STARTED, ''))}`,
      }
    },
  },

  {
    id: 29,
    name: 'built-in tool parity: the file tools and the jail refuse the same targets',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      put(path.join(ctx.outside, 'target.txt'), 'original\n')
      put(path.join(ctx.workspace, '.git/HEAD'), 'ref: refs/heads/main\n')
      fs.symlinkSync(path.join(ctx.outside, 'target.txt'), path.join(ctx.workspace, 'final'))
      fs.symlinkSync(ctx.outside, path.join(ctx.workspace, 'folder'))
      fs.symlinkSync(path.join(ctx.outside, 'dangling.txt'), path.join(ctx.workspace, 'dangling'))
      const targets = [
        '../outside/dotdot.txt',
        path.join(ctx.outside, 'absolute.txt'),
        'final',
        'folder/intermediate.txt',
        'dangling',
        ...PROTECTED,
      ]
      const state = () => ({ outside: snapshot(ctx.outside), inside: protectedState(ctx) })
      const before = state()
      const tool = fileToolsOver(ctx.view)
      const refusals: string[] = []
      for (const target of targets) {
        const result = await tool('write_file', { path: target, content: 'PWNED\n' })
        if (result.type === 'error') refusals.push(result.code)
      }
      const byTools = diff(before, state())
      const writeAll = `for t in ${targets.map(quote).join(' ')}; do (mkdir -p "$(dirname "$t")"; echo PWNED > "$t") 2>/dev/null; done`
      await ctx.jailed(writeAll)
      const byJail = diff(before, state())
      await ctx.plain(writeAll)
      const byControl = diff(before, state())
      return {
        control: byControl.length === targets.length,
        jailed: byTools.length + byJail.length > 0,
        detail: `tools reached: ${byTools.join(', ') || 'nothing'} (refusals: ${refusals.length}/${targets.length}); jail reached: ${byJail.join(', ') || 'nothing'}; control reached ${byControl.length}/${targets.length}`,
      }
    },
  },

  {
    id: 30,
    name: 'odd repository layouts: a .git file, a linked .git/hooks, no .git',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      // A worktree: .git is a file naming the real repository elsewhere.
      const worktree = path.join(ctx.base, 'worktree')
      put(path.join(worktree, '.git'), 'gitdir: ../elsewhere\n')
      const worktreeJail = ctx.jailOver(worktree).jail
      const redirect = `(echo "gitdir: /tmp/evil" > .git; rm -f .git; mkdir .git && echo evil > .git/config) 2>/dev/null`
      await ctx.jailed(redirect, { jail: worktreeJail })
      const worktreeChanged = () =>
        fs.lstatSync(path.join(worktree, '.git')).isFile() !== true ||
        read(path.join(worktree, '.git')) !== 'gitdir: ../elsewhere\n'
      const worktreeReached = worktreeChanged()
      // .git/hooks as a link: the jail refuses to start rather than leave the target open.
      const linked = path.join(ctx.base, 'linked')
      put(path.join(linked, 'real-hooks/pre-commit'), 'original\n')
      put(path.join(linked, '.git/HEAD'), 'ref: refs/heads/main\n')
      fs.symlinkSync('../real-hooks', path.join(linked, '.git/hooks'))
      const linkedJail = ctx.jailOver(linked).jail
      let refusal = 'started'
      try {
        await ctx.jailed('echo evil > .git/hooks/pre-commit', {
          jail: linkedJail,
          expectStart: false,
        })
      } catch (error) {
        refusal = EitriError.isInstance(error) ? error.code : String(error)
      }
      const hooksChanged = () => read(path.join(linked, 'real-hooks/pre-commit')) !== 'original\n'
      // A mirror refuses to start; an overlay starts, and the way back refuses the hook.
      const linkedReached =
        (refusal !== 'protected_path' && refusal !== 'started') || hooksChanged()
      // No .git at all: the jail starts and nothing can create one.
      const bare = path.join(ctx.base, 'bare')
      put(path.join(bare, 'a.txt'), 'a\n')
      const bareJail = ctx.jailOver(bare).jail
      await ctx.jailed('(git init -q; mkdir -p .git/hooks; echo evil > .git/config) 2>/dev/null', {
        jail: bareJail,
      })
      const bareReached = exists(path.join(bare, '.git'))
      const detail = `.git file changed: ${worktreeReached}; linked hooks: ${refusal}${hooksChanged() ? ', changed' : ''}; .git created: ${bareReached}`
      await ctx.plain(redirect, { cwd: worktree })
      await ctx.plain('echo evil > .git/hooks/pre-commit', { cwd: linked })
      await ctx.plain('git init -q', { cwd: bare })
      return {
        control: worktreeChanged() && hooksChanged() && exists(path.join(bare, '.git')),
        jailed: worktreeReached || linkedReached || bareReached,
        detail,
      }
    },
  },
]

/** Protected paths of §9, each written by the tools, the jail and the control in attack 29. */
const PROTECTED = [
  '.git/hooks/pre-commit',
  '.git/config',
  '.git/info/attributes',
  '.gitmodules',
  '.envrc',
  '.mcp.json',
  '.vscode/tasks.json',
  '.idea/workspace.xml',
  '.claude/settings.json',
  '.codex/config.toml',
  '.cursor/mcp.json',
]

/** The content of each protected path in the workspace, or `(none)`. */
function protectedState(ctx: AttackContext): Record<string, string> {
  return Object.fromEntries(
    PROTECTED.map((relative) => [relative, read(path.join(ctx.workspace, relative)) ?? '(none)']),
  )
}

function diff(
  before: { outside: Record<string, string>; inside: Record<string, string> },
  after: { outside: Record<string, string>; inside: Record<string, string> },
): string[] {
  return [
    ...changes(before.outside, after.outside).map((key) => `outside/${key}`),
    ...changes(before.inside, after.inside),
  ]
}
