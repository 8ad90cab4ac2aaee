/**
 * @module jail/overlay/kept-git
 * The keep door's git rule (decision 0026): of what a command wrote inside a repository folder
 * (a fork's `.git`, a repository in an ignored folder, one a command made), the kept layer
 * takes only what local git work writes — objects, refs, reflogs, the index, HEAD and git's
 * state files, as `judgeGitWrite` allows on main — and a `config` only when it names no
 * program that the configuration the command saw did not already name (`user.email` is kept,
 * an fsmonitor, a `!` alias, a textconv or filter driver, a hooks path or an include is not).
 * Hooks and the rest are never kept. Kept, they would run at the next `git status` or
 * `git diff`, which the command policy lets run without a person.
 *
 * Nor is anything kept that leads git to a repository no door has judged: `git status` enters
 * every submodule (a gitlink of the index whose folder holds a `.git`) and runs git there under
 * that repository's configuration. So a `config` may not change `core.worktree`, and an index
 * is kept only when every entry is a path git itself stages (no `..`, `.`, empty or `.git`
 * part, not absolute): a gitlink `../tmp/x/sub`, or the work tree moved to `/tmp/x`, ran the
 * fsmonitor of a repository a command left in the warm jail's `/tmp` at every later
 * `git status`.
 *
 * What is not kept is removed from the command's upper layer before it moves in, so the kept
 * layer stays as it was there, and each is named with why. No link is followed: the upper
 * layer is reached only through pinned folders, and a link inside a repository folder is
 * itself refused (git makes none there).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { GIT_FOLDER, gitEntryKind, gitPlaceByName } from '../../access/git-metadata/git-place.ts'
import { namesGitPlace, namesProgram } from '../../access/git-metadata/program-paths.ts'
import { parseIndex } from '../../workspace/git/index-file.ts'
import { listIndex } from '../../workspace/git/index-listing.ts'
import { parseGitConfigFile, type GitConfigEntry } from '../../workspace/git/git-config-file.ts'
import { atPinned, listPinned, READ_FLAGS, removePinned } from '../pinned-folder.ts'

/** A configuration larger than this is not kept (git's own are a few kilobytes). */
const MAX_CONFIG_BYTES = 256 * 1024
/** An index larger than this is not kept (a few hundred thousand entries take tens of MiB). */
const MAX_INDEX_BYTES = 512 * 1024 * 1024

/** What a repository folder's `config` was below the command (kept layer, else workspace). */
export type BaseConfig = (configPath: string) => Buffer | undefined

/** One path not kept, with why. */
export interface NotKept {
  readonly path: string
  readonly reason: string
}

/**
 * Removes from the upper layer `upper`, below each of `relatives`, what the keep door does not
 * take inside a repository folder; answers what was removed, with why (files `git init` copies
 * from its templates, which git never runs, go without a word).
 */
export async function pruneKeptGit(
  upper: string,
  relatives: readonly string[],
  base: BaseConfig,
): Promise<NotKept[]> {
  const notKept: NotKept[] = []
  const visit = async (relative: string, type: EntryType): Promise<void> => {
    const place = gitPlaceByName(relative)
    if (place.type === 'entry') {
      if (type === 'directory' || type === 'whiteout') return descend(relative)
      removePinned(upper, relative)
      notKept.push({ path: relative, reason: reason('it is not a folder') })
      return
    }
    if (place.type === 'none') return type === 'directory' ? descend(relative) : undefined
    if (type === 'socket') return removePinned(upper, relative) // an fsmonitor daemon's, gone
    const refusal = await judgeInside(upper, relative, place.inner, type, base)
    if (refusal === undefined) return type === 'directory' ? descend(relative) : undefined
    const silent = isTemplateOnly(upper, relative, place.inner)
    removePinned(upper, relative)
    if (!silent) notKept.push({ path: relative, reason: refusal })
  }
  const descend = async (folder: string): Promise<void> => {
    // Outside a repository folder only folders and `.git` entries matter: an installed
    // `node_modules` costs one listing per folder, not a look at each file.
    const outside = gitPlaceByName(folder).type === 'none'
    for (const entry of listPinned(upper, folder)) {
      const child = `${folder}/${entry.name}`
      if (outside && entry.name.toLowerCase() !== GIT_FOLDER) {
        if (entry.isDirectory()) await visit(child, 'directory')
        continue
      }
      const type = entryType(upper, child)
      if (type !== undefined) await visit(child, type)
    }
  }
  for (const relative of relatives) {
    const type = entryType(upper, relative)
    if (type !== undefined) await visit(relative, type)
  }
  return notKept
}

type EntryType = 'directory' | 'file' | 'symlink' | 'whiteout' | 'socket' | 'other'

function entryType(upper: string, relative: string): EntryType | undefined {
  const stat = atPinned(upper, relative, (pinned) =>
    fs.lstatSync(pinned, { throwIfNoEntry: false }),
  )
  if (stat === undefined) return undefined
  if (stat.isDirectory()) return 'directory'
  if (stat.isFile()) return 'file'
  if (stat.isSymbolicLink()) return 'symlink'
  if (stat.isCharacterDevice() && stat.rdev === 0) return 'whiteout'
  return stat.isSocket() ? 'socket' : 'other'
}

/** Why the entry at `inner` inside a repository folder is not kept; undefined: kept. */
async function judgeInside(
  upper: string,
  relative: string,
  inner: string,
  type: EntryType,
  base: BaseConfig,
): Promise<string | undefined> {
  if (type === 'symlink') return reason('git makes no links there')
  if (type === 'other') return reason('git makes no such file there')
  if (inner === 'index' && type === 'file') return judgeIndex(upper, relative)
  if (gitEntryKind(inner) !== undefined) return undefined
  if (inner !== 'config')
    return reason('git runs code from what it holds there, such as hooks and scripts')
  if (type !== 'file') return reason('local git work never removes or replaces it')
  return judgeConfig(upper, relative, base)
}

/** Why a command's `config` is not kept: it names a program the one below did not. */
async function judgeConfig(
  upper: string,
  relative: string,
  base: BaseConfig,
): Promise<string | undefined> {
  const bytes = readPinned(upper, relative)
  if (bytes === undefined) return reason(`it is larger than ${MAX_CONFIG_BYTES / 1024} KiB`)
  const entries = await parseConfig(bytes)
  if (entries === undefined) return reason('git cannot read it')
  const below = base(relative)
  const before = new Set(((below === undefined ? [] : await parseConfig(below)) ?? []).map(entryId))
  const added = (names: (key: string, value: string | undefined) => boolean): string[] => [
    ...new Set(
      entries
        .filter(({ key, value }) => names(key, value) && !before.has(entryId({ key, value })))
        .map(({ key }) => key),
    ),
  ]
  const programs = added(namesProgram)
  const places = added(namesGitPlace)
  if (programs.length === 0 && places.length === 0) return undefined
  const named = [
    ...(programs.length > 0 ? [`a program git would run (${programs.join(', ')})`] : []),
    ...(places.length > 0
      ? [`a place git reads other repositories from (${places.join(', ')})`]
      : []),
  ].join(' and ')
  return `not kept in the jail: it names ${named}, and git commands that need no approval (git status, git diff, git log -p) would run it. In a fork git keeps only what local git work writes (commits, branches, the index, and settings that name no program, such as user.email); this command's change to the configuration is gone. To use such a setting, ask the user to add it to their repository's configuration`
}

/**
 * Why a command's index is not kept: an entry whose path git never stages (outside the work
 * tree, or inside a repository folder), where `git status` would look, and enter a submodule.
 */
async function judgeIndex(upper: string, relative: string): Promise<string | undefined> {
  const bytes = readPinned(upper, relative, MAX_INDEX_BYTES)
  if (bytes === undefined) return reason(`it is larger than ${MAX_INDEX_BYTES / 1024 / 1024} MiB`)
  // The object format is the repository's; an index's checksum fits one of them.
  const sha1 = parseIndex(bytes, 'sha1', Infinity)
  const index = sha1.ok ? sha1 : parseIndex(bytes, 'sha256', Infinity)
  if (!index.ok) return reason('git cannot read it as an index')
  // Git's own reading too, as main's index rules check theirs: a path this reading missed
  // would still be entered.
  const listed = await listIndex(bytes, sha1.ok ? 'sha1' : 'sha256', index.entries.length + 1)
  if (!listed.ok) return reason(`git cannot read it as an index: ${listed.reason}`)
  const stray = [...index.entries, ...listed.entries].find(
    ({ path: entry }) => !isStagedPath(entry),
  )
  if (stray === undefined) return undefined
  return `not kept in the jail: it stages ${JSON.stringify(stray.path.slice(0, 200))}, a path git never stages (outside the work tree or inside a repository folder), where git status, which needs no approval, would enter another repository; this command's change to the index is gone. Stage files of the workspace with git add`
}

/** A path git itself puts in an index: relative, no empty, `.`, `..` or `.git` part. */
function isStagedPath(entry: string): boolean {
  return entry
    .split('/')
    .every(
      (part) => part !== '' && part !== '.' && part !== '..' && part.toLowerCase() !== GIT_FOLDER,
    )
}

/** The reason for what a repository folder never keeps. */
function reason(why: string): string {
  return `not kept in the jail: inside a repository folder only objects, refs, reflogs, the index, HEAD, git's state files and a configuration that names no new program are kept (${why}); this command's change there is gone. For a hook or a git setting, ask the user to add it to their repository`
}

function entryId({ key, value }: GitConfigEntry): string {
  return `${key}\0${value ?? ''}`
}

/** A file's bytes, opened without following a link; undefined when not a regular file or larger than `maxBytes`. */
function readPinned(
  root: string,
  relative: string,
  maxBytes = MAX_CONFIG_BYTES,
): Buffer | undefined {
  return atPinned(root, relative, (pinned) => {
    // Never waiting on a FIFO (pinned-folder.ts, READ_FLAGS); only a regular file is read.
    const descriptor = fs.openSync(pinned, READ_FLAGS)
    try {
      const stat = fs.fstatSync(descriptor)
      if (!stat.isFile() || stat.size > maxBytes) return undefined
      return fs.readFileSync(descriptor)
    } finally {
      fs.closeSync(descriptor)
    }
  })
}

/** A configuration's entries as git reads them (git parses a copy; nothing runs). */
async function parseConfig(bytes: Buffer): Promise<GitConfigEntry[] | undefined> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-kept-config-'))
  try {
    const file = path.join(folder, 'config')
    fs.writeFileSync(file, bytes, { mode: 0o600 })
    return await parseGitConfigFile(file)
  } finally {
    fs.rmSync(folder, { recursive: true, force: true })
  }
}

/** Reads a repository folder's config below a layer, without following a link; at most 256 KiB. */
export function readBaseConfig(root: string, relative: string): Buffer | undefined {
  try {
    return readPinned(root, relative)
  } catch {
    return undefined
  }
}

/**
 * Whether what is at `relative` (`inner` inside its repository folder) holds only what
 * `git init` copies from its templates, which git never runs: `description`, `info/exclude`,
 * `hooks/*.sample`, and folders of nothing else (an empty `branches`).
 */
function isTemplateOnly(upper: string, relative: string, inner: string): boolean {
  if (inner === 'description' || inner === 'info/exclude') return true
  if (/^hooks\/[^/]+\.sample$/.test(inner)) return true
  if (!['hooks', 'info', 'branches'].includes(inner)) return false
  if (entryType(upper, relative) !== 'directory') return false
  return listPinned(upper, relative).every(
    (entry) =>
      entry.isFile() &&
      isTemplateOnly(upper, `${relative}/${entry.name}`, `${inner}/${entry.name}`),
  )
}
