/**
 * @module access/command-policy/dangerous-paths
 * How bad a recursive delete, chmod or chown of a path would be. Paths are read as the jail
 * runs commands: relative to the workspace root, which programs see at `/workspace`. A path
 * that only the shell expands (a glob, `/$X`) is judged by what it could become.
 */
import path from 'node:path'
import picomatch from 'picomatch'
import { WORKSPACE_MOUNT } from '../path-policy.ts'
import type { ShellWord } from './shell-syntax.ts'
import { isWithin } from '../../util/relative-paths.ts'

/** What a path names, from the policy's point of view. */
export type PathDanger =
  /** `/`, a system folder, or something inside one that the system needs. */
  | 'system'
  /** A home folder (`~`, `$HOME`, `~user`) or all of its contents. */
  | 'home'
  /** The workspace root, all of its contents, or its `.git`. */
  | 'workspace'
  /** Only known when the command runs, and could be any of the above. */
  | 'unknown'

/** Stands for any home folder; `~` and `$HOME` are read as this path. */
const HOME = '/home/~'

/** Folders the system needs whole: anything at or under them is dangerous. */
const SYSTEM_TREES = [
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/proc',
  '/root',
  '/sbin',
  '/sys',
  '/usr',
]

/**
 * Folders whose deletion, or the deletion of all they hold, is a disaster, though one entry
 * below may well be someone's work (`/var/tmp/build`, `/home/me/project/dist`).
 */
const SYSTEM_FOLDERS = ['/home', '/mnt', '/media', '/opt', '/run', '/srv', '/var']

/** Entry names a sweeping glob (`*`, `.*`, `?*`) matches in a folder. */
const SWEEP_PROBES = ['src', 'lib', 'x', '.cache', '.git']

const WORKSPACE_TARGETS = [WORKSPACE_MOUNT, `${WORKSPACE_MOUNT}/.git`]

/** Block devices and memory: writing them destroys a disk or the running system. */
const DISK_DEVICES =
  /^\/dev\/((s|h|v|xv)d[a-z]|nvme\d|mmcblk\d|md\d|dm-\d|loop\d|sr\d|mapper\/|disk\/|mem$|kmem$|port$)/

/** True for a path that names a disk (`/dev/sda1`, `/dev/nvme0n1`) or the system's memory. */
export function isDiskDevice(path: string): boolean {
  return DISK_DEVICES.test(path)
}

/**
 * Judges the target of a recursive operation. Undefined means nothing the policy guards.
 *
 * @example
 * pathDanger(literalWord('/etc')) // 'system'
 * pathDanger(literalWord('.'))    // 'workspace'
 */
export function pathDanger(word: ShellWord): PathDanger | undefined {
  if (word.value === undefined) return prefixDanger(word.staticPrefix)
  if (word.glob) return globDanger(word.pattern)
  return exactDanger(absolute(word.value))
}

/** The path as the jail would resolve it from the workspace root, `~` read as {@link HOME}. */
function absolute(value: string): string {
  const rooted = value.startsWith('~')
    ? HOME + value.slice(1)
    : value.startsWith('/')
      ? value
      : `${WORKSPACE_MOUNT}/${value}`
  const normal = path.posix.normalize(rooted)
  return normal.length > 1 && normal.endsWith('/') ? normal.slice(0, -1) : normal
}

function inSystemTree(target: string): boolean {
  return SYSTEM_TREES.some((tree) => isWithin(target, tree))
}

function exactDanger(target: string): PathDanger | undefined {
  if (target === '/' || inSystemTree(target)) return 'system'
  if (SYSTEM_FOLDERS.includes(target)) return 'system'
  if (target === HOME || /^\/home\/[^/]+$/.test(target)) return 'home'
  if (WORKSPACE_TARGETS.includes(target)) return 'workspace'
  return undefined
}

function globDanger(written: string): PathDanger | undefined {
  const pattern = absolute(written)
  const segments = pattern.split('/')
  const firstGlob = segments.findIndex((segment) => /(?<!\\)[*?[{]/.test(segment))
  if (inSystemTree(segments.slice(0, firstGlob).join('/'))) return 'system'
  // Braces expand before paths resolve: `{/etc,/usr}` names absolute paths though it starts
  // with neither `/` nor `~`, so such a pattern is also tried as written.
  const candidates = written.includes('{') ? [pattern, written] : [pattern]
  const matchers = candidates.map((candidate) => picomatch(candidate, { dot: true }))
  const matches = (probe: string): boolean => matchers.some((matcher) => matcher(probe))
  const swept = (folder: string): string[] => [
    folder,
    ...SWEEP_PROBES.map((name) => `${folder}/${name}`),
  ]
  if (['/', ...SYSTEM_TREES, ...SYSTEM_FOLDERS.flatMap(swept)].some(matches)) return 'system'
  if (swept(HOME).some(matches)) return 'home'
  if ([...swept(WORKSPACE_MOUNT), ...WORKSPACE_TARGETS].some(matches)) return 'workspace'
  return undefined
}

/**
 * A word that starts with `prefix` and continues with something only known at run time: as
 * bad as the worst path it could become by adding a name (the policy does not assume `..`).
 */
function prefixDanger(prefix: string): PathDanger {
  if (prefix === '') return 'unknown'
  const rooted = absolute(prefix) + (prefix.endsWith('/') && prefix !== '/' ? '/' : '')
  const couldBecome = (target: string): boolean => `${target}/`.startsWith(rooted)
  if (rooted === '/' || inSystemTree(rooted)) return 'system'
  if ([...SYSTEM_TREES, ...SYSTEM_FOLDERS].some(couldBecome)) return 'system'
  if (couldBecome(HOME)) return 'home'
  return 'unknown'
}
