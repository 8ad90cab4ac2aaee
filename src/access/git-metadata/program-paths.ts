/**
 * @module access/git-metadata/program-paths
 * Files and folders that a repository's own configuration names as code git runs: the hooks
 * folder (`core.hooksPath = .husky`), an fsmonitor program, a pager, an editor, a credential
 * helper, filter and diff drivers, `!` aliases, signature checks git runs gpg for, and the
 * configuration files it includes. When one of them lies in the workspace, writing it is as good
 * as writing a hook, so it is protected like one. Which keys hold programs is decided by the key's name (`…command`,
 * `…program`, `…helper`, …), so drivers of any name are covered.
 */
import path from 'node:path'
import type { GitConfigEntry } from '../../workspace/git/git-config-file.ts'

/** A host path git runs code from (or reads configuration from), and the key that names it. */
export interface ProgramPath {
  readonly hostPath: string
  /** True for a folder (a hooks folder): everything below it is protected too. */
  readonly folder: boolean
  readonly key: string
}

/**
 * Endings of variable names (the last part of a key) whose value is a command or a program:
 * `gpg.ssh.defaultKeyCommand`, `sendemail.sendmailCmd`, `imap.tunnel`, `diff.x.textconv`,
 * `filter.x.clean`… Matched by ending, so drivers and tools of any name are covered.
 */
const PROGRAM_ENDINGS = [
  'command',
  'cmd',
  'program',
  'helper',
  'editor',
  'pager',
  'askpass',
  'fsmonitor',
  'proxy',
  'textconv',
  'driver',
  'clean',
  'smudge',
  'process',
  'external',
  'filter',
  'receivepack',
  'uploadpack',
  'hook',
  'tunnel',
  'server',
  'exec',
  'shell',
]

/** Keys whose whole value is a path (no command line to split): a folder for these. */
const FOLDER_NAMES = new Set(['hookspath', 'templatedir'])
/** Keys whose whole value is a path to a program. */
const PATH_NAMES = new Set(['path', ...FOLDER_NAMES])

/** Values of `core.fsmonitor` that switch the built-in daemon on or off rather than name a program. */
const BOOLEAN_WORDS = new Set(['true', 'false', 'yes', 'no', 'on', 'off', '1', '0', ''])

/** Where relative values of one configuration file are taken from. */
export interface ConfigPlace {
  /** The configuration file (includes are relative to its folder). */
  readonly file: string
  /** The folder commands and hooks run in: the repository's work tree (or the bare folder). */
  readonly workTree: string
  /** The user's home, for `~/`. */
  readonly home?: string | undefined
}

/**
 * The program paths and included configuration files named by `entries`.
 *
 * @example
 * programPathsOf([{ key: 'core.hookspath', value: '.husky' }], { file: '/w/.git/config', workTree: '/w' })
 * // { programs: [{ hostPath: '/w/.husky', folder: true, key: 'core.hookspath' }], includes: [] }
 */
export function programPathsOf(
  entries: readonly GitConfigEntry[],
  place: ConfigPlace,
): { programs: ProgramPath[]; includes: string[] } {
  const programs: ProgramPath[] = []
  const includes: string[] = []
  for (const { key, value } of entries) {
    const named = programOf(key, value)
    if (named === undefined) continue
    if (named.type === 'include') {
      const file = resolve(named.text, path.dirname(place.file), place.home)
      if (file !== undefined) {
        includes.push(file)
        programs.push({ hostPath: file, folder: false, key })
      }
      continue
    }
    if (named.type === 'path') {
      const hostPath = resolve(named.text, place.workTree, place.home)
      if (hostPath === undefined) continue
      programs.push({ hostPath, folder: named.folder, key })
      // husky 9 (`core.hooksPath = .husky/_`, or `<dir>/_` for another folder): the stubs in
      // `_` run the scripts beside it, `<dir>/pre-commit`, so the folder above is code too.
      if (named.folder && key.endsWith('hookspath') && path.basename(hostPath) === '_')
        programs.push({ hostPath: path.dirname(hostPath), folder: true, key })
      continue
    }
    // Every word that names a path, not only the first: `sh scripts/x.sh`, `VAR=1 ./x`,
    // `python3 tools/x.py`, `!f(){ ./x; }; f`. A bare name is looked up in PATH, not here.
    for (const word of pathWords(named.text)) {
      const hostPath = resolve(word, place.workTree, place.home)
      if (hostPath !== undefined) programs.push({ hostPath, folder: false, key })
    }
  }
  return { programs, includes }
}

/** What one configuration entry names that git runs or reads as configuration. */
type NamedProgram =
  | { readonly type: 'include'; readonly text: string }
  | { readonly type: 'path'; readonly text: string; readonly folder: boolean }
  | { readonly type: 'command'; readonly text: string }

/**
 * Whether the entry `key = value` names a program git runs (a command line, a program's path,
 * a hooks folder) or another configuration file to read: by the key's rules above, whatever
 * the value's words. `user.email`, `alias.st = status`, `core.fsmonitor = false` name none.
 *
 * @example
 * namesProgram('core.fsmonitor', 'sh -c x') // true
 * namesProgram('user.email', 'a@example.org') // false
 */
export function namesProgram(key: string, value: string | undefined): boolean {
  return programOf(key.toLowerCase(), value) !== undefined
}

/**
 * Keys whose value is a place git reads other repositories from, though no key names a
 * program: `core.worktree` moves the work tree, and `git status` enters every submodule
 * folder of the work tree it holds and runs git there under that repository's own
 * configuration (its fsmonitor, its filters). A work tree moved out of the workspace (to a
 * jail's `/tmp`) leads git to repositories no door has judged.
 *
 * @example
 * namesGitPlace('core.worktree') // true
 */
export function namesGitPlace(key: string): boolean {
  return key.toLowerCase() === 'core.worktree'
}

/** Values git reads as false (`[log] showSignature` with no value is true). */
const FALSE_WORD = /^(?:false|no|off|-?0+|)$/i
/** Pretty-format placeholders that verify a signature (`%G?`, `%GS`, …), as git-read-only.ts. */
const VERIFYING_FORMAT = /%G|%\(signature/

/**
 * Keys that make `git log` and `git show`, which run without a person, verify signatures: git
 * then runs gpg (or what `gpg.format` picks), which obeys its own configuration (a
 * `dirmngr-program` in `~/.gnupg/gpg.conf` runs for a key it lacks). Their values name no
 * program, so the program they stand for is gpg.
 */
function verifiesSignatures(section: string, key: string, value: string | undefined): boolean {
  if (key === 'log.showsignature') return value === undefined || !FALSE_WORD.test(value.trim())
  const format = key === 'format.pretty' || section === 'pretty'
  return format && value !== undefined && VERIFYING_FORMAT.test(value)
}

/** What the entry names (`key` as git lists it: section and name in lower case). */
function programOf(key: string, value: string | undefined): NamedProgram | undefined {
  const section = key.slice(0, key.indexOf('.'))
  if (verifiesSignatures(section, key, value)) return { type: 'command', text: 'gpg' }
  if (value === undefined) return undefined
  const name = key.slice(key.lastIndexOf('.') + 1)
  if ((section === 'include' || section === 'includeif') && name === 'path')
    return { type: 'include', text: value }
  if (PATH_NAMES.has(name)) return { type: 'path', text: value, folder: FOLDER_NAMES.has(name) }
  const command =
    section === 'alias' || (section === 'submodule' && name === 'update')
      ? value.trimStart().startsWith('!')
        ? value.trimStart().slice(1)
        : undefined
      : PROGRAM_ENDINGS.some((ending) => name.endsWith(ending)) || section === 'pager'
        ? value
        : undefined
  if (command === undefined) return undefined
  if (name === 'fsmonitor' && BOOLEAN_WORDS.has(command.trim().toLowerCase())) return undefined
  return { type: 'command', text: command }
}

/**
 * The words of a shell command line that name paths (they hold a `/` or start with `~`),
 * unquoted, with `NAME=` prefixes of assignments taken off.
 */
export function pathWords(command: string): string[] {
  const words: string[] = []
  for (const match of command.matchAll(/"([^"]*)"|'([^']*)'|([^\s;&|<>(){}"']+)/g)) {
    const raw = match[1] ?? match[2] ?? (match[3] as string).replace(/\\(.)/g, '$1')
    const word = raw.replace(/^[A-Za-z_][A-Za-z0-9_]*=/, '')
    if (word.includes('/') || word.startsWith('~')) words.push(word)
  }
  return words
}

function resolve(value: string, base: string, home: string | undefined): string | undefined {
  const trimmed = value.trim()
  if (trimmed === '') return undefined
  if (trimmed === '~' || trimmed.startsWith('~/')) {
    return home === undefined ? undefined : path.join(home, trimmed.slice(1))
  }
  if (trimmed.startsWith('~')) return undefined // another user's home
  return path.resolve(base, trimmed)
}
