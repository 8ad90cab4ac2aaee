/**
 * @module bubblewrap/caller-mounts
 * A root caller's jail starts bubblewrap as `nobody`, and bubblewrap resolves every bind source
 * with that user's rights: a source below a folder `nobody` cannot enter (a checkout under a
 * 0700 home, a private TMPDIR) cannot be mounted. bubblewrap 0.8's `--ro-bind-fd` does not help:
 * it turns the descriptor back into its path and resolves that path as `nobody` again.
 *
 * So the caller mounts such a source itself, with its own rights: bubblewrap starts in a fresh
 * private mount namespace (`unshare --mount --propagation private`) where root first binds each
 * unreachable folder onto an empty mount point `nobody` can reach, then drops to `nobody`
 * (`setpriv`) and starts bubblewrap, which binds the mount point. Only that one bubblewrap
 * sees these mounts, and they go when it ends; nothing on the host changes (no mode bits, no
 * host mounts), and the jail still gets exactly the binds of its spec, no parent folder.
 *
 * Only the part of a path `nobody` cannot reach is mounted this way: the folder just below the
 * last one it cannot enter. The rest of the path (where a program's own links may lie, inside
 * the mirror) is still resolved by bubblewrap as `nobody`, so a link planted there is never
 * followed with the caller's rights.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { EitriError } from '../errors/eitri-error.ts'
import type { HostIdentity } from './jail-identity.ts'
import type { JailBind, JailSpec } from './jail-spec.ts'
import { ownedPrefix } from '../util/owned-folders.ts'

/** One source the caller mounts for the jail's user, on a mount point that user can reach. */
export interface CallerMount {
  /** The host folder or file the jail's user cannot reach. */
  readonly source: string
  /** An empty folder or file of the same kind, where the source appears. */
  readonly mountPoint: string
  /** Read-write only when a writable bind goes through it. */
  readonly writable: boolean
}

/** The programs the caller's mount step runs (util-linux); found on the jail's fixed PATH. */
const UNSHARE = 'unshare'
const SETPRIV = 'setpriv'
const NSENTER = 'nsenter'

/**
 * Mounts `source mount-point mode` triples, then runs what follows `--`. A constant: paths
 * reach it only as arguments, never as code.
 */
const MOUNT_SCRIPT = [
  'while [ "$1" != -- ]; do',
  '  mount --bind -o "$3" -- "$1" "$2" || {',
  '    echo "eitri: the jail cannot show $1 to its user: mounting it failed" >&2; exit 125; }',
  '  shift 3',
  'done',
  'shift',
  'exec "$@"',
].join('\n')

/**
 * Whether `uid`/`gid` (with no supplementary groups) may search folder `stat`. Mode bits only:
 * an ACL that denies more makes bubblewrap fail to start, which fails closed.
 */
function searchable(stat: fs.Stats, identity: HostIdentity): boolean {
  if (stat.uid === identity.uid) return (stat.mode & 0o100) !== 0
  if (stat.gid === identity.gid) return (stat.mode & 0o010) !== 0
  return (stat.mode & 0o001) !== 0
}

function lstatOrUndefined(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file)
  } catch {
    return undefined
  }
}

/**
 * The part of `source` the caller must mount for `identity`: the path down to the entry just
 * below the last folder that identity cannot search; undefined when bubblewrap can reach the
 * source itself. The path is walked as written, never through a link: at the first link the
 * walk stops and bubblewrap resolves the rest (a link the caller would have to follow is left
 * unmounted, so bubblewrap fails on it rather than the caller following it with its rights).
 */
export function unreachablePart(source: string, identity: HostIdentity): string | undefined {
  const parts = path.resolve(source).split('/').filter(Boolean)
  let folder = '/'
  let unreachable: string | undefined
  for (const part of parts) {
    const stat = lstatOrUndefined(folder)
    if (stat === undefined || !stat.isDirectory()) break
    const next = path.join(folder, part)
    if (!searchable(stat, identity)) unreachable = next
    if (lstatOrUndefined(next)?.isSymbolicLink() !== false) break
    folder = next
  }
  if (unreachable === undefined) return undefined
  const stat = lstatOrUndefined(unreachable)
  return stat !== undefined && (stat.isDirectory() || stat.isFile()) ? unreachable : undefined
}

/**
 * The caller's mount points of one jail: an empty folder or file per unreachable source, in a
 * folder of their own that the jail's user can pass through but neither write (so it cannot
 * swap a mount point for a link) nor list, under random names. A link a program plants in a
 * writable mount (the mirror) is resolved by bubblewrap as the jail's user and could climb to
 * that folder while the other mounts of the same start are in place: it finds no name there
 * to go on with. Removed by {@link close}, each entry without recursion: a mount point is only
 * ever mounted inside a jail's own namespace, and never emptied from the host.
 */
export class CallerMounts {
  readonly #identity: HostIdentity
  readonly #bases: readonly string[]
  #folder: string | undefined
  readonly #points = new Map<string, string>()

  /** `bases`: where the folder may go, in order of preference (one the jail's user can reach). */
  constructor(
    identity: HostIdentity,
    bases: readonly string[] = [os.tmpdir(), '/tmp', '/dev/shm'],
  ) {
    this.#identity = identity
    this.#bases = bases
  }

  /**
   * `spec` with every source the jail's user cannot reach replaced by its mount point, and the
   * mounts the caller makes first. For a caller whose jail runs as itself, `spec` as it is.
   *
   * @throws EitriError `jail_unavailable` when no folder for mount points is reachable.
   */
  plan(spec: JailSpec): { spec: JailSpec; mounts: CallerMount[] } {
    if (!this.#identity.dropped) return { spec, mounts: [] }
    const planner = this.#planner()
    const bind = (entry: JailBind): JailBind => ({
      ...entry,
      source: planner.reach(entry.source, entry.writable),
    })
    const planned: JailSpec = {
      ...spec,
      workspace: planner.reach(spec.workspace, spec.workspaceAccess === 'read-write'),
      overlays: spec.overlays.map(bind),
      binds: spec.binds.map(bind),
    }
    return { spec: planned, mounts: planner.mounts() }
  }

  /**
   * `paths` as the jail's user can reach them once `mounts` are made, read-only: for starting
   * a program as that user from files it cannot reach (the escape suite's unprivileged half).
   */
  reach(paths: readonly string[]): { paths: string[]; mounts: CallerMount[] } {
    if (!this.#identity.dropped) return { paths: [...paths], mounts: [] }
    const planner = this.#planner()
    return { paths: paths.map((file) => planner.reach(file, false)), mounts: planner.mounts() }
  }

  /** Removes the mount points and their folder. Idempotent. */
  close(): void {
    const folder = this.#folder
    if (folder === undefined) return
    for (const point of this.#points.values()) {
      // rmdir and unlink only: never a recursive removal that could follow into a mount.
      try {
        if (fs.lstatSync(point).isDirectory()) fs.rmdirSync(point)
        else fs.unlinkSync(point)
      } catch {
        // already gone
      }
    }
    this.#points.clear()
    try {
      fs.rmdirSync(folder)
    } catch {
      // not empty or gone: left rather than removed recursively
    }
    this.#folder = undefined
  }

  /** Collects the mounts of one start: one per unreachable part, writable if any use is. */
  #planner(): { reach(source: string, writable: boolean): string; mounts(): CallerMount[] } {
    const mounts = new Map<string, { mountPoint: string; writable: boolean }>()
    return {
      reach: (source, writable) => {
        const part = unreachablePart(source, this.#identity)
        if (part === undefined) return source
        const mountPoint = this.#mountPoint(part)
        const mount = mounts.get(part)
        mounts.set(part, { mountPoint, writable: writable || mount?.writable === true })
        return mountPoint + path.resolve(source).slice(part.length)
      },
      mounts: () =>
        [...mounts].map(([source, { mountPoint, writable }]) => ({ source, mountPoint, writable })),
    }
  }

  /** Why no folder for mount points can be found here, and the fix. */
  unavailable(): { reason: string; fix: string } {
    return {
      reason: `the jail's user (uid ${this.#identity.uid}) can enter none of ${[...new Set(this.#bases)].join(', ')}, so the jail cannot show it files it cannot reach itself`,
      fix: 'set TMPDIR to a folder every user can enter, such as /tmp',
    }
  }

  #mountPoint(source: string): string {
    const kind = fs.lstatSync(source).isDirectory() ? 'folder' : 'file'
    const key = `${kind}:${source}`
    const known = this.#points.get(key)
    if (known !== undefined) return known
    const folder = this.#ensureFolder()
    const point = path.join(folder, randomBytes(12).toString('hex'))
    if (kind === 'folder') fs.mkdirSync(point, { mode: 0o755 })
    else fs.writeFileSync(point, '', { mode: 0o444, flag: 'wx' })
    this.#points.set(key, point)
    return point
  }

  #ensureFolder(): string {
    if (this.#folder !== undefined) return this.#folder
    for (const base of new Set(this.#bases)) {
      let folder: string
      try {
        folder = fs.mkdtempSync(ownedPrefix('mounts', base))
      } catch {
        continue // no such folder, or not writable by the caller
      }
      fs.chmodSync(folder, 0o711)
      // The folder itself is 0711; what matters is the way to it.
      if (unreachablePart(folder, this.#identity) === undefined) {
        this.#folder = folder
        return folder
      }
      fs.rmdirSync(folder)
    }
    const { reason, fix } = this.unavailable()
    throw new EitriError(
      'jail_unavailable',
      `The jail is unavailable, so nothing ran: ${reason}. To fix: ${fix}.`,
    )
  }
}

/**
 * The command that starts `program` (bubblewrap) with `args` as `identity` after the caller
 * made `mounts`: `unshare` gives it a private mount namespace, a constant shell script mounts,
 * and `setpriv` drops to the jail's user (no supplementary groups) before `program` starts. Each
 * step execs the next, so the process the caller started is `program` in the end, and the
 * descriptors it was given reach `program` unchanged.
 */
export function mountingLaunch(
  program: string,
  args: readonly string[],
  identity: HostIdentity,
  mounts: readonly CallerMount[],
): { command: string; args: string[] } {
  return {
    command: UNSHARE,
    args: [
      '--mount',
      // Never `shared`: the mounts must not reach the host's namespace.
      '--propagation',
      'private',
      '--',
      '/bin/sh',
      '-c',
      MOUNT_SCRIPT,
      'eitri-jail-mounts',
      ...mounts.flatMap((mount) => [mount.source, mount.mountPoint, mount.writable ? 'rw' : 'ro']),
      '--',
      SETPRIV,
      `--reuid=${identity.uid}`,
      `--regid=${identity.gid}`,
      '--clear-groups',
      '--',
      program,
      ...args,
    ],
  }
}

/**
 * The command that starts `program` with `args` inside another mount namespace (`enter`: a
 * layer host's `nsenter …`, whose caller mounts are already made), as `identity`. A root
 * caller drops to the jail's user there: `nsenter` itself, once inside, sets the group (which
 * drops every supplementary group) and the user, as `setpriv` would, with one program fewer to
 * start per command; any other `enter` gets `setpriv` after it. Each step execs the next, as
 * with {@link mountingLaunch}.
 */
export function enteringLaunch(
  enter: readonly string[],
  program: string,
  args: readonly string[],
  identity: HostIdentity,
): { command: string; args: string[] } {
  const [command, ...rest] = enter
  if (command === undefined) throw new Error('enteringLaunch needs a command to enter with')
  if (!identity.dropped) return { command, args: [...rest, program, ...args] }
  if (command === NSENTER && rest.at(-1) === '--') {
    return {
      command,
      args: [
        ...rest.slice(0, -1),
        `--setgid=${identity.gid}`,
        `--setuid=${identity.uid}`,
        '--',
        program,
        ...args,
      ],
    }
  }
  const drop = [
    SETPRIV,
    `--reuid=${identity.uid}`,
    `--regid=${identity.gid}`,
    '--clear-groups',
    '--',
  ]
  return { command, args: [...rest, ...drop, program, ...args] }
}
