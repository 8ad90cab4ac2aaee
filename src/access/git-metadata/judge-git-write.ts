/**
 * @module access/git-metadata/judge-git-write
 * The path policy's git rule for one write (a file, a folder, a link or a removal), the same
 * at every door: inside a repository folder only what local git work writes; no repository
 * folder made where there was none (a `.git`, or a folder completed into one git would use as
 * a bare repository); nothing a repository's configuration names as code.
 */
import { gitEntryKind, gitPlaceByName, GIT_FOLDER } from './git-place.ts'
import type { WorkspaceProgramPath } from './repository-programs.ts'
import { isWithin as within } from '../../util/relative-paths.ts'

/** How the rule looks at a tree (the path policy's lookup). */
export interface GitLookup {
  /** The kind of the entry at a relative path, without following it; undefined if missing. */
  kind(relativePath: string): Promise<'symlink' | 'directory' | 'other' | undefined>
}

/** The program paths of the repositories whose work trees are given (relative to the root). */
export type ProgramPathSource = (workTrees: readonly string[]) => Promise<WorkspaceProgramPath[]>

/**
 * Judges writing `candidate` (a workspace-relative path, as written, traversed or resolved).
 * Answers the reason it is refused, or undefined when git has nothing against it.
 */
export async function judgeGitWrite(
  candidate: string,
  lookup: GitLookup,
  programs?: ProgramPathSource,
  { fork = false }: { readonly fork?: boolean } = {},
): Promise<string | undefined> {
  const place = gitPlaceByName(candidate)
  if (place.type === 'entry') {
    return `${candidate} is a repository's own folder: making, replacing or removing it is refused (git history and configuration live there)`
  }
  if (place.type === 'inside') {
    const kind = await lookup.kind(place.gitDir)
    if (kind === undefined && fork) return forkRefusal(candidate, place.gitDir)
    if (kind !== 'directory') {
      return kind === undefined
        ? `${candidate} would create a repository (${place.gitDir}) where there was none; git would run code from its configuration. Make repositories outside the workspace, or ask the user to`
        : `${place.gitDir} is not a folder (a file pointing git elsewhere, or a link); nothing may be written below it`
    }
    if (gitEntryKind(place.inner) === undefined) return insideRefusal(candidate, place.gitDir)
  }
  const components = candidate === '' ? [] : candidate.split('/')
  const workTrees = ['']
  for (let depth = 0; depth < components.length; depth++) {
    const folder = components.slice(0, depth).join('/')
    const below = components.slice(depth)
    const here = (name: string): string => (folder === '' ? name : `${folder}/${name}`)
    // A `.git` folder, or a `.git` file (a submodule, a linked worktree) whose repository is
    // elsewhere: either way its configuration names what git runs there.
    if (depth > 0 && (await lookup.kind(here(GIT_FOLDER))) !== undefined) workTrees.push(folder)
    // The repository folder itself and the folders above it: its own rule decided. Below it
    // (`.git/refs/x/`), a folder completed into a repository is refused like anywhere else.
    if (place.type === 'inside' && !within(folder, place.gitDir)) continue
    if (place.type === 'inside' && folder === place.gitDir) continue
    const state = await repositoryState(lookup, here, below[0] as string)
    if (state.before) {
      // A bare repository git would use if someone ran git in it: the same rule as inside .git.
      if (gitEntryKind(below.join('/')) === undefined)
        return insideRefusal(candidate, folder || '.')
    } else if (state.after) {
      return `${candidate} would make ${folder || 'the workspace root'} a repository git would use (a HEAD with objects and refs, or with a commondir); git would run code from its configuration. Make repositories outside the workspace, or ask the user to`
    }
  }
  if (programs === undefined) return undefined
  for (const program of await programs(workTrees)) {
    if (candidate === program.path || (program.folder && within(candidate, program.path))) {
      return `${candidate} is code git runs: the repository's configuration names it (${program.key}), so tools may not write it. Ask the user to change it`
    }
  }
  return undefined
}

/**
 * A fork's files never hold a repository folder: git's own files in a fork are what git run in
 * the fork writes, kept in its jail, and a merge brings only files into the user's folder, where
 * git would run a hook or a configuration written there on the host.
 */
function forkRefusal(candidate: string, gitDir: string): string {
  return `${candidate} is inside a repository folder (${gitDir}), which a fork's files never hold: a merge would carry it into the user's folder, where git runs hooks and configuration on the host. In a fork, git's own files are only what git run in the fork's shell writes (commits, branches), kept in the fork's jail and never merged. Run git in the fork's shell to commit or branch there; for a hook or a git setting in the user's repository, ask the user to add it`
}

function insideRefusal(candidate: string, gitDir: string): string {
  return `${candidate} is protected: inside a repository folder (${gitDir}) only objects, refs, reflogs, the index, HEAD and git's state files may be written; git runs code from the rest (configuration, hooks, commondir, alternates). Ask the user to change it`
}

/**
 * Whether a folder is a repository git would use (a `HEAD` beside `objects` and `refs`, or
 * beside a `commondir` that lends them), before and after a write whose first name below the
 * folder is `top`. Without `HEAD` a folder is no repository, and a write that is not `HEAD`
 * cannot make it one: one lookup decides for almost every folder.
 */
async function repositoryState(
  lookup: GitLookup,
  here: (name: string) => string,
  top: string,
): Promise<{ before: boolean; after: boolean }> {
  // Links count: git follows them when it looks for a repository.
  const has = async (name: string): Promise<boolean> =>
    (await lookup.kind(here(name))) !== undefined
  const head = await has('HEAD')
  if (!head && top !== 'HEAD') return { before: false, after: false }
  const common = await has('commondir')
  const objects = await has('objects')
  const refs = await has('refs')
  const before = head && (common || (objects && refs))
  const written = (name: string, present: boolean): boolean => present || top === name
  const after =
    written('HEAD', head) &&
    (written('commondir', common) || (written('objects', objects) && written('refs', refs)))
  return { before, after }
}
