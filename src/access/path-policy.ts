/**
 * @module access/path-policy
 * The one decision every door asks: may this path be read or written? A path must resolve,
 * symbolic links followed exactly as the kernel would, to a place inside the workspace; writes
 * must not touch a protected path; eitri's own state is invisible to both.
 */
import path from 'node:path'
import { judgeGitWrite, type ProgramPathSource } from './git-metadata/judge-git-write.ts'
import type { ProtectedPathMatcher } from './protected-paths.ts'
import { isWithin } from '../util/relative-paths.ts'

/** What an access is for. */
export type PathIntent = 'read' | 'write'

/** The policy's answer: the canonical workspace-relative path, or why not. */
export type PathDecision =
  | { readonly type: 'allowed'; readonly path: string }
  | {
      readonly type: 'denied'
      readonly code: 'path_outside_workspace' | 'protected_path' | 'invalid_input'
      readonly reason: string
    }

/** How the policy looks at a tree: a real folder or, later, a fork's tree. */
export interface PathLookup {
  /** The kind of the entry at a resolved relative path, without following it; undefined if missing. */
  kind(relativePath: string): Promise<'symlink' | 'directory' | 'other' | undefined>
  /** The target of a symbolic link at a resolved relative path. */
  readlink(relativePath: string): Promise<string>
}

/** What the policy needs to know. */
export interface PathPolicyOptions {
  readonly lookup: PathLookup
  /** Host paths by which absolute input may name the workspace root (given and real). */
  readonly hostRoots: readonly string[]
  readonly isProtected: ProtectedPathMatcher
  /** Workspace-relative folders that hold eitri's own state or configuration: never readable. */
  readonly hidden?: readonly string[]
  /**
   * What the repositories' configuration names as code (hooks folders, fsmonitor programs…):
   * protected like hooks. Without it only the rules by name apply.
   */
  readonly programs?: ProgramPathSource
  /**
   * Whether the tree is a fork's: its files never hold a repository folder, and a write into
   * one is refused as such (not as a repository made where there was none). @default false
   */
  readonly fork?: boolean
}

/** The fixed path at which programs see the workspace; accepted as an alias of the root. */
export const WORKSPACE_MOUNT = '/workspace'

/** C0 control characters and DEL. */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0001-\u001f\u007f]/

/** Beyond this many links in one resolution, the path is refused (the kernel's ELOOP). */
const MAX_SYMLINK_HOPS = 40

/**
 * Decides about `input` for `intent`. Never throws for any string input. With
 * `followFinal: false` a final symbolic link is judged as itself, not as its target (for
 * removing or creating a link).
 *
 * @example
 * await decidePath(policy, '../etc/passwd', 'read') // { type: 'denied', code: 'path_outside_workspace', … }
 */
export async function decidePath(
  options: PathPolicyOptions,
  input: string,
  intent: PathIntent,
  { followFinal = true }: { followFinal?: boolean } = {},
): Promise<PathDecision> {
  if (input.includes('\0')) return denied('invalid_input', 'the path contains a NUL byte')
  // A newline or another control character in a name lets one file pass for others in every
  // listing a person reads (a diff, a merge's question): no tool or program makes one.
  if (intent === 'write' && CONTROL_CHARACTER.test(input))
    return denied(
      'invalid_input',
      `${JSON.stringify(input)} has a control character (a newline, a tab, …) in its name, which would show as other text in listings and reviews; choose a name without one`,
    )
  const start = relativeToRoot(input, options.hostRoots)
  if (start === undefined) {
    return denied(
      'path_outside_workspace',
      `${input} is outside the workspace; use a path relative to the workspace root`,
    )
  }
  const walked = await walk(options.lookup, start, options.hostRoots, followFinal)
  if (walked.type === 'outside') {
    return denied(
      'path_outside_workspace',
      `${input} leads outside the workspace${walked.via ? ` through the symbolic link ${walked.via}` : ''}`,
    )
  }
  if (walked.type === 'loop')
    return denied('invalid_input', `${input}: too many levels of symbolic links`)
  const touched = [...new Set([lexical(start), ...walked.links, walked.path])]
  for (const hidden of options.hidden ?? []) {
    if (touched.some((candidate) => isWithin(candidate, hidden))) {
      return denied(
        'protected_path',
        `${input} is eitri's own state, which no tool may read or write`,
      )
    }
    // A link made (or an entry removed) on the way to eitri's state or configuration would let
    // the next eitri read a file of the agent's (a configuration that does not exist yet,
    // reached through `.config/eitri -> elsewhere`).
    if (
      intent === 'write' &&
      !followFinal &&
      touched.some((candidate) => candidate !== '' && hidden.startsWith(`${candidate}/`))
    ) {
      return denied(
        'protected_path',
        `${input} is on the way to eitri's own state or configuration: it may not be replaced by a link or removed`,
      )
    }
  }
  if (intent === 'write') {
    for (const candidate of touched) {
      const rule = options.isProtected(candidate)
      if (rule !== undefined) {
        return denied(
          'protected_path',
          `${candidate} is protected (rule "${rule}"): a host runs code from it later, so tools may not write it. Ask the user to change it, or to allow it in eitri's configuration`,
        )
      }
      const git = await judgeGitWrite(candidate, options.lookup, options.programs, {
        fork: options.fork === true,
      })
      if (git !== undefined) return denied('protected_path', git)
    }
  }
  return { type: 'allowed', path: walked.path }
}

type Walked =
  | { type: 'inside'; path: string; links: string[] }
  | { type: 'outside'; via: string | undefined }
  | { type: 'loop' }

/**
 * Resolves components one at a time against the tree. `..` pops the real position, as the
 * kernel does after following a link; a missing component ends the lookups and the rest is
 * taken as written (it will be created).
 */
async function walk(
  lookup: PathLookup,
  components: string[],
  hostRoots: readonly string[],
  followFinal: boolean,
): Promise<Walked> {
  const resolved: string[] = []
  const pending = [...components]
  const links: string[] = []
  let missing = false
  let hops = 0
  let lastLink: string | undefined
  while (pending.length > 0) {
    const component = pending.shift() as string
    if (component === '' || component === '.') continue
    if (component === '..') {
      if (resolved.length === 0) return { type: 'outside', via: lastLink }
      resolved.pop()
      // `missing/../link` must still look `link` up: a later component may be a link out.
      missing = false
      continue
    }
    resolved.push(component)
    if (missing) continue
    const here = resolved.join('/')
    const kind = await lookup.kind(here)
    if (kind === undefined) {
      missing = true
      continue
    }
    if (kind !== 'symlink') continue
    // lstat semantics: the last component names the link itself (removing or creating it).
    if (!followFinal && pending.length === 0) continue
    if (++hops > MAX_SYMLINK_HOPS) return { type: 'loop' }
    links.push(here)
    lastLink = here
    const target = await lookup.readlink(here)
    resolved.pop()
    if (path.posix.isAbsolute(target)) {
      const inside = relativeToRoot(target, hostRoots, false)
      if (inside === undefined) return { type: 'outside', via: here }
      resolved.length = 0
      pending.unshift(...inside)
    } else {
      pending.unshift(...target.split('/'))
    }
  }
  return { type: 'inside', path: resolved.join('/'), links }
}

/** Splits input into components below the root, or undefined when it names a place outside. */
function relativeToRoot(
  input: string,
  hostRoots: readonly string[],
  acceptMount = true,
): string[] | undefined {
  if (!input.startsWith('/')) return input.split('/')
  const roots = acceptMount ? [...hostRoots, WORKSPACE_MOUNT] : hostRoots
  for (const root of roots) {
    const rest = stripRoot(input, root)
    if (rest !== undefined) return rest.split('/')
  }
  return undefined
}

function stripRoot(absolute: string, root: string): string | undefined {
  const base = root.endsWith('/') ? root.slice(0, -1) : root
  if (absolute === base) return ''
  if (absolute.startsWith(`${base}/`)) return absolute.slice(base.length + 1)
  return undefined
}

/** The input as written, without `.` and empty components, for matching protection rules. */
function lexical(components: readonly string[]): string {
  return components.filter((component) => component !== '' && component !== '.').join('/')
}

function denied(
  code: 'path_outside_workspace' | 'protected_path' | 'invalid_input',
  reason: string,
): PathDecision {
  return { type: 'denied', code, reason }
}
