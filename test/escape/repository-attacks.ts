/**
 * Attacks on the repository a person later runs git in: metadata that makes git run code
 * (a `commondir`, a folder turned into a repository, alternates, the hooks path and programs the
 * configuration names), history lost from the jail (refs, reflogs, objects), and history, an
 * index or a stash that would deliver a protected file. Each is judged
 * the way it would bite: a person runs git on the host afterwards, and canaries outside the
 * workspace show what ran or what was lost.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileToolsOver } from './context.ts'
import { put, quote, read, type Attack, type AttackContext } from './helpers.ts'

/** A repository of the caller's own with a hooks path, an fsmonitor program and an include. */
async function makeRepository(ctx: AttackContext): Promise<void> {
  put(path.join(ctx.workspace, '.husky/pre-commit'), '#!/bin/sh\nexit 0\n', 0o755)
  put(path.join(ctx.workspace, 'scripts/fsmonitor.sh'), '#!/bin/sh\nexit 1\n', 0o755)
  put(path.join(ctx.workspace, '.gitconfig.local'), '[user]\n\tname = person\n')
  put(path.join(ctx.workspace, 'a.txt'), 'a\n')
  const setup = await ctx.plain(
    [
      'git init -q -b main',
      'git config core.hooksPath .husky',
      'git config core.fsmonitor scripts/fsmonitor.sh',
      'git config include.path ../.gitconfig.local',
      'git config user.email person@example.org',
      'git add -A && git commit -q -m first',
      // A second repository, nested, for the commondir vector (it replaces all configuration).
      'git init -q -b main second',
      'git -C second -c user.name=p -c user.email=p@e commit -q --allow-empty -m first',
    ].join(' && '),
  )
  if (setup.exitCode !== 0) throw new Error(`git setup failed: ${setup.stderr}`)
}

/** Planted configurations whose fsmonitor touches `canary` when git reads them. */
function plantScript(ctx: AttackContext): string {
  const canary = (name: string) => quote(path.join(ctx.outside, `ran-${name}`))
  const config = (name: string) =>
    `'[core]\\n\\tfsmonitor = "touch ${canary(name).slice(1, -1)}"\\n'`
  return [
    // commondir: git takes the configuration (and objects) of another folder.
    `mkdir -p evil/objects evil/refs; printf ${config('commondir')} > evil/config; echo ../../evil > second/.git/commondir`,
    // A nested folder made a repository with a HEAD and a commondir.
    `mkdir -p evil2/objects evil2/refs; printf ${config('nested')} > evil2/config`,
    `mkdir -p sub/.git; echo 'ref: refs/heads/main' > sub/.git/HEAD; echo ../../evil2 > sub/.git/commondir`,
    // A folder completed into a bare repository git would use.
    `mkdir -p bare/objects bare/refs; printf ${config('bare')} > bare/config; echo 'ref: refs/heads/main' > bare/HEAD`,
    // Other repository folders git reads: alternates, a submodule's, a worktree's.
    `mkdir -p .git/objects/info; echo ${quote(ctx.outside)} > .git/objects/info/alternates`,
    `mkdir -p .git/modules/m; printf ${config('module')} > .git/modules/m/config`,
    `mkdir -p .git/worktrees/w; echo /tmp > .git/worktrees/w/gitdir`,
    // What the repository's own configuration names as code.
    `printf '#!/bin/sh\\ntouch ${canary('hook').slice(1, -1)}\\n' > .husky/pre-commit`,
    `printf '#!/bin/sh\\ntouch ${canary('fsmonitor').slice(1, -1)}\\nexit 1\\n' > scripts/fsmonitor.sh`,
    `printf '[alias]\\n\\tpwn = "!touch ${canary('include').slice(1, -1)}"\\n' > .gitconfig.local`,
  ]
    .map((line) => `(${line}) 2>/dev/null`)
    .join('; ')
}

/** A person's git work on the host after the attack, then what it ran and what it found. */
async function afterwards(ctx: AttackContext): Promise<string[]> {
  await ctx.plain(
    [
      'git status >/dev/null 2>&1',
      'git -C second status >/dev/null 2>&1',
      'git -C sub status >/dev/null 2>&1',
      'git -C bare log >/dev/null 2>&1',
      'git commit -q --allow-empty -m person >/dev/null 2>&1',
      'git pwn >/dev/null 2>&1',
    ].join('; '),
  )
  const found = fs
    .readdirSync(ctx.outside)
    .filter((name) => name.startsWith('ran-'))
    .map((name) => name.slice('ran-'.length))
  const bare = await ctx.plain('git -C bare rev-parse --git-dir 2>/dev/null')
  if (bare.exitCode === 0) found.push('bare is a repository')
  for (const relative of [
    '.git/objects/info/alternates',
    '.git/modules/m/config',
    '.git/worktrees/w/gitdir',
  ])
    if (read(path.join(ctx.workspace, relative)) !== undefined) found.push(relative)
  for (const name of fs.readdirSync(ctx.outside)) fs.rmSync(path.join(ctx.outside, name))
  return found.sort()
}

/** Every ref, every reflog and every object file of the workspace's repository. */
function historyState(ctx: AttackContext): {
  refs: Set<string>
  reflogs: Map<string, string>
  objects: Map<string, string>
} {
  const git = path.join(ctx.workspace, '.git')
  const refs = new Set<string>()
  const reflogs = new Map<string, string>()
  const objects = new Map<string, string>()
  const walk = (folder: string, visit: (relative: string, full: string) => void): void => {
    if (!fs.existsSync(folder)) return
    for (const entry of fs.readdirSync(folder, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue
      const full = path.join(entry.parentPath, entry.name)
      visit(path.relative(git, full), full)
    }
  }
  walk(path.join(git, 'refs'), (relative) => refs.add(relative))
  for (const line of (read(path.join(git, 'packed-refs')) ?? '').split('\n')) {
    const match = /^[0-9a-f]{40} (\S+)$/.exec(line)
    if (match?.[1] !== undefined) refs.add(match[1])
  }
  walk(path.join(git, 'logs'), (relative, full) =>
    reflogs.set(relative, fs.readFileSync(full, 'latin1')),
  )
  walk(path.join(git, 'objects'), (relative, full) => {
    if (!relative.startsWith('objects/info/'))
      objects.set(relative, fs.readFileSync(full, 'latin1'))
  })
  return { refs, reflogs, objects }
}

/** What of `before`'s history `after` lost: refs, reflog text, objects. */
function lost(
  before: ReturnType<typeof historyState>,
  after: ReturnType<typeof historyState>,
): string[] {
  const found: string[] = []
  for (const ref of before.refs) if (!after.refs.has(ref)) found.push(`ref ${ref}`)
  for (const [log, text] of before.reflogs)
    if (!(after.reflogs.get(log) ?? '').startsWith(text)) found.push(`reflog ${log}`)
  for (const [object, bytes] of before.objects)
    if (after.objects.get(object) !== bytes) found.push(`object ${object}`)
  return found
}

const DESTROY_HISTORY = [
  'git branch -D topic loose',
  'git tag -d v1',
  'git update-ref -d refs/heads/main',
  'git reflog expire --expire=now --all',
  'git gc -q --prune=now',
  'for f in .git/objects/??/*; do chmod u+w "$f"; echo junk > "$f"; done',
  ': > .git/logs/HEAD',
  'rm -f .git/packed-refs',
  'rm -rf .git/refs/tags .git/logs/refs',
]
  .map((line) => `(${line}) >/dev/null 2>&1`)
  .join('; ')

export const repositoryAttacks: readonly Attack[] = [
  {
    id: 31,
    name: 'repository metadata that makes git run code on the host: commondir, a new repository, alternates, the hooks path, programs the configuration names',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      await makeRepository(ctx)
      const script = plantScript(ctx)
      const jailed = await ctx.jailed(script)
      const reached = await afterwards(ctx)
      await ctx.plain(script)
      const control = await afterwards(ctx)
      const kept = (jailed.sync?.kept ?? []).map((entry) => entry.path).join(', ')
      return {
        // Every vector works without the jail: each ran code or planted what git reads.
        control: control.length === 9,
        jailed: reached.length > 0,
        detail: `after the jail: ${reached.join(', ') || 'nothing'} (kept in the jail: ${kept || 'nothing'}); control: ${control.join(', ')}`,
      }
    },
  },

  {
    id: 31,
    name: 'repository metadata through the file tools: the same writes are refused at every door',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      await makeRepository(ctx)
      const tool = fileToolsOver(ctx.view)
      const writes: [string, string][] = [
        ['.git/commondir', '../evil\n'],
        ['second/.git/commondir', '../../evil\n'],
        ['sub/.git/HEAD', 'ref: refs/heads/main\n'],
        ['sub/.git/commondir', '../../evil\n'],
        ['.git/objects/info/alternates', `${ctx.outside}\n`],
        ['.git/modules/m/config', '[core]\n'],
        ['.git/worktrees/w/gitdir', '/tmp\n'],
        ['.git/description', 'x\n'],
        ['.husky/pre-commit', '#!/bin/sh\necho pwned\n'],
        ['scripts/fsmonitor.sh', '#!/bin/sh\necho pwned\n'],
        ['.gitconfig.local', '[alias]\n\tpwn = !echo pwned\n'],
      ]
      put(path.join(ctx.workspace, 'bare/objects/.keep'), '')
      put(path.join(ctx.workspace, 'bare/refs/.keep'), '')
      writes.push(['bare/HEAD', 'ref: refs/heads/main\n'])
      const refusals: string[] = []
      const through: string[] = []
      for (const [target, content] of writes) {
        const result = await tool('write_file', { path: target, content })
        if (result.type === 'error' && result.code === 'protected_path') refusals.push(target)
        else through.push(target)
      }
      // Positive control: what local git work writes goes through.
      const allowed = [
        '.git/refs/heads/from-a-tool',
        '.git/logs/refs/heads/from-a-tool',
        'docs/readme.md',
      ]
      const control: string[] = []
      const head = (await ctx.plain('git rev-parse HEAD')).stdout.trim()
      const contents: Record<string, string> = {
        '.git/refs/heads/from-a-tool': `${head}\n`,
        // A reflog holds whole lines as git writes them.
        '.git/logs/refs/heads/from-a-tool': `${'0'.repeat(40)} ${head} person <person@example.org> 1700000000 +0000\tbranch: Created from HEAD\n`,
        'docs/readme.md': `${head}\n`,
      }
      for (const target of allowed) {
        const result = await tool('write_file', { path: target, content: contents[target] ?? '' })
        if (result.type === 'success') control.push(target)
      }
      return {
        control: control.length === allowed.length,
        jailed: through.length > 0,
        detail: `written: ${through.join(', ') || 'nothing'}; refused ${refusals.length}/${writes.length}; allowed writes that went through: ${control.join(', ')}`,
      }
    },
  },

  {
    id: 32,
    name: 'history lost from the jail: deleted branches and tags, rewritten packed-refs, truncated reflogs, pruned and overwritten objects',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      await makeRepository(ctx)
      const setup = await ctx.plain(
        [
          'git branch topic',
          'git tag -a v1 -m v1',
          'git pack-refs --all',
          'echo b > b.txt && git add b.txt && git commit -q -m second',
          'git branch loose',
        ].join(' && '),
      )
      if (setup.exitCode !== 0) throw new Error(`git setup failed: ${setup.stderr}`)
      const before = historyState(ctx)
      const jailed = await ctx.jailed(`${DESTROY_HISTORY}; git status >/dev/null 2>&1; echo done`)
      const reached = lost(before, historyState(ctx))
      const refusedInJail = jailed.sync?.refused.length ?? 0
      // The repository still works, and history can grow from the jail.
      const grow = await ctx.jailed(
        'git -c user.name=agent -c user.email=a@b commit -q --allow-empty -m from-the-jail; git branch grown',
      )
      const log = await ctx.plain('git log --format=%s grown')
      const grew = log.stdout.includes('from-the-jail') && log.stdout.includes('first')
      await ctx.plain(DESTROY_HISTORY)
      const control = lost(before, historyState(ctx))
      return {
        control: ['ref ', 'reflog ', 'object '].every((kind) =>
          control.some((item) => item.startsWith(kind)),
        ),
        jailed: reached.length > 0 || !grew,
        detail: `lost after the jail: ${reached.slice(0, 8).join(', ') || 'nothing'} (refused in the jail: ${refusedInJail}); history grew from the jail: ${grew} (${grow.sync?.refused.map((r) => r.path).join(', ') || 'nothing refused'}); control lost ${control.length}`,
      }
    },
  },

  {
    id: 32,
    name: 'history that delivers a protected file: a commit of a hook under the hooks path, on the checked-out branch, which the person’s next git reset --hard and checkout would write and run',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      await makeRepository(ctx)
      const canary = quote(path.join(ctx.outside, 'ran-post-checkout')).slice(1, -1)
      const commit = (files: string): string =>
        `git add ${files} && git -c user.name=agent -c user.email=a@b commit -q --no-verify -m work`
      const plant = [
        `printf '#!/bin/sh\\ntouch ${canary}\\n' > .husky/post-checkout`,
        'chmod +x .husky/post-checkout',
        commit('.husky/post-checkout'),
      ].join(' && ')
      // The person's next git work: a hard reset to the branch, then a new branch (a checkout).
      const personWorks = async (): Promise<boolean> => {
        await ctx.plain(
          'git reset -q --hard >/dev/null 2>&1; git checkout -q -b "p$RANDOM" >/dev/null 2>&1',
        )
        const ran = fs.existsSync(path.join(ctx.outside, 'ran-post-checkout'))
        fs.rmSync(path.join(ctx.outside, 'ran-post-checkout'), { force: true })
        return ran
      }
      const jailed = await ctx.jailed(plant)
      const reached = await personWorks()
      const refused = (jailed.sync?.refused ?? []).map((entry) => entry.path)
      // Positive control: a commit of ordinary files from the jail comes back.
      const ordinary = await ctx.jailed(`echo ok > ok.txt && ${commit('ok.txt')}`)
      const log = await ctx.plain('git log -1 --format=%s')
      const ordinaryBack =
        log.stdout.trim() === 'work' && (ordinary.sync?.refused.length ?? 1) === 0
      // The control: the same commit made without the jail is checked out and runs.
      await ctx.plain(plant)
      const control = await personWorks()
      return {
        control: control && ordinaryBack,
        jailed: reached,
        detail: `hook ran after the jail: ${reached} (refused: ${refused.join(', ') || 'nothing'}); an ordinary commit came back: ${ordinaryBack}; control ran: ${control}`,
      }
    },
  },

  {
    id: 32,
    name: 'an index or a stash that delivers a protected file: a hook under the hooks path staged, or in a stash’s untracked files, which the person’s next git checkout . or git stash pop would write and run',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      await makeRepository(ctx)
      const canary = quote(path.join(ctx.outside, 'ran-post-checkout')).slice(1, -1)
      // Made from the object store alone: the hooks folder is read-only in the jail.
      const hook = `blob=$(printf '#!/bin/sh\\ntouch ${canary}\\n' | git hash-object -w --stdin)`
      const stage = `${hook} && git update-index --add --cacheinfo "100755,$blob,.husky/post-checkout"`
      const stash = [
        hook,
        'hooks=$(printf "100755 blob $blob\\tpost-checkout\\n" | git mktree)',
        'u=$(git commit-tree $(printf "040000 tree $hooks\\t.husky\\n" | git mktree) -m untracked)',
        'i=$(git commit-tree $(git write-tree) -p HEAD -m index)',
        'w=$(git commit-tree $(git write-tree) -p HEAD -p $i -p $u -m WIP)',
        'git stash store -m WIP $w',
      ].join(' && ')
      // The person's next git work: restore the work tree, pop the stash, start a branch.
      const personWorks = async (): Promise<boolean> => {
        await ctx.plain(
          'git checkout -q . >/dev/null 2>&1; git stash pop -q >/dev/null 2>&1; git checkout -q -b "p$RANDOM" >/dev/null 2>&1',
        )
        const ran = fs.existsSync(path.join(ctx.outside, 'ran-post-checkout'))
        fs.rmSync(path.join(ctx.outside, 'ran-post-checkout'), { force: true })
        return ran
      }
      const staged = await ctx.jailed(stage)
      const reachedByIndex = await personWorks()
      const stashed = await ctx.jailed(stash)
      const reachedByStash = await personWorks()
      const refused = [...(staged.sync?.refused ?? []), ...(stashed.sync?.refused ?? [])].map(
        (entry) => entry.path,
      )
      // Positive control: ordinary staging from the jail comes back staged.
      await ctx.jailed('echo ok > ok.txt && git add ok.txt')
      const status = await ctx.plain('git status --porcelain ok.txt')
      const stagedBack = status.stdout.trim() === 'A  ok.txt'
      await ctx.plain('git reset -q --hard')
      // The control: the same index, then the same stash, made without the jail, and run.
      await ctx.plain(stage)
      const controlIndex = await personWorks()
      await ctx.plain('git rm -q --cached .husky/post-checkout; rm -f .husky/post-checkout')
      await ctx.plain(stash)
      const controlStash = await personWorks()
      return {
        control: controlIndex && controlStash && stagedBack,
        jailed: reachedByIndex || reachedByStash,
        detail: `hook ran after the jail: by the index ${reachedByIndex}, by the stash ${reachedByStash} (refused: ${refused.join(', ') || 'nothing'}); ordinary staging came back: ${stagedBack}; control ran: by the index ${controlIndex}, by the stash ${controlStash}`,
      }
    },
  },

  {
    id: 33,
    name: 'files that come back from the jail: setuid and setgid bits, files other users may write, absolute and outward links, sparse files, names that are not UTF-8',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      put(path.join(ctx.workspace, 'a.txt'), 'a\n')
      const script = [
        // The control runs after the jail's run: start from the same empty workspace.
        'rm -rf suid sgid sticky world absolute-in absolute-out relative-out big1 big2 big3 bad*',
        'cp /usr/bin/id suid && chmod 4755 suid',
        'cp /usr/bin/id sgid && chmod 2755 sgid',
        'mkdir sticky && chmod 1777 sticky',
        'echo w > world && chmod 666 world',
        'ln -s /workspace/a.txt absolute-in',
        'ln -s /etc/passwd absolute-out',
        'ln -s ../outside relative-out',
        'truncate -s 1G big1 && truncate -s 1G big2 && truncate -s 1G big3',
        "touch $'bad\\xff.txt'",
      ]
        .map((line) => `(${line}) 2>/dev/null`)
        .join('; ')
      const reached = (): string[] => {
        const found: string[] = []
        const at = (name: string) =>
          fs.lstatSync(path.join(ctx.workspace, name), { throwIfNoEntry: false })
        for (const name of ['suid', 'sgid', 'sticky'])
          if (((at(name)?.mode ?? 0) & 0o7000) !== 0)
            found.push(`${name} mode ${(at(name)?.mode ?? 0).toString(8)}`)
        if (((at('world')?.mode ?? 0) & 0o022) !== 0)
          found.push(`world mode ${(at('world')?.mode ?? 0).toString(8)}`)
        for (const name of ['absolute-in', 'absolute-out', 'relative-out']) {
          if (at(name)?.isSymbolicLink() !== true) continue
          const target = fs.readlinkSync(path.join(ctx.workspace, name))
          const resolved = path.resolve(ctx.workspace, target)
          if (path.isAbsolute(target) || !resolved.startsWith(`${ctx.workspace}/`))
            found.push(`${name} -> ${target}`)
        }
        for (const name of ['big1', 'big2', 'big3'])
          if ((at(name)?.size ?? 0) >= 64 * 1024 * 1024) found.push(`${name} of ${at(name)?.size}`)
        if (
          fs.readdirSync(ctx.workspace, { encoding: 'buffer' }).some((name) => name.includes(0xff))
        )
          found.push('a name that is not UTF-8')
        return found
      }
      const jailed = await ctx.jailed(script)
      const onHost = reached()
      const reported = (jailed.sync?.refused ?? []).map(
        (refusal) => `${refusal.path}: ${refusal.reason}`,
      )
      const silent = [
        ['big1', /apparent size/],
        ['bad', /not valid UTF-8/],
        ['absolute-out', /outside the workspace/],
      ].filter(
        ([name, reason]) =>
          !reported.some(
            (line) => line.startsWith(name as string) && (reason as RegExp).test(line),
          ),
      )
      let relinked = '(none)'
      try {
        relinked = fs.readlinkSync(path.join(ctx.workspace, 'absolute-in'))
      } catch {
        // not written back at all
      }
      await ctx.plain(script)
      const control = reached()
      return {
        control: control.length === 11,
        jailed: onHost.length > 0 || silent.length > 0 || relinked !== 'a.txt',
        detail: `on the host after the jail: ${onHost.join(', ') || 'nothing'}; not reported: ${silent.map(([name]) => name).join(', ') || 'nothing'}; absolute-in -> ${relinked}; control: ${control.join(', ')}`,
      }
    },
  },
]
