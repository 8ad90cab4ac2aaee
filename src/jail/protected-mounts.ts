/**
 * @module jail/protected-mounts
 * Which parts of the workspace are mounted read-only inside the jail, whether or not they
 * exist: the places a host later runs code from. An absent one gets an empty read-only
 * placeholder (bubblewrap creates its mount point; it is removed again when no run needs it),
 * so a program can neither write nor create it, nor rename it away: a mount point cannot move.
 */
import fs from 'node:fs'
import path from 'node:path'
import picomatch from 'picomatch'
import { EitriError } from '../errors/eitri-error.ts'
import { ownedPrefix } from '../util/owned-folders.ts'
import { DEFAULT_PROTECTED_PATHS } from '../access/protected-paths.ts'
import { JAIL_WORKSPACE, type JailBind } from '../bubblewrap/jail-spec.ts'

/**
 * The protected entries at the workspace root and what kind of placeholder stands in for each:
 * the built-in list's plain names (files) and `name/**` patterns (folders). The same names
 * deeper down are left to the way back, which judges every path.
 */
const ROOT_ENTRIES: readonly (readonly [string, 'file' | 'directory'])[] =
  DEFAULT_PROTECTED_PATHS.flatMap((pattern): (readonly [string, 'file' | 'directory'])[] => {
    const folder = pattern.endsWith('/**') ? pattern.slice(0, -3) : pattern
    if (folder.includes('/') || picomatch.scan(folder).isGlob) return []
    return [[folder, folder === pattern ? 'file' : 'directory']]
  })

const GIT_ENTRIES: readonly (readonly [string, 'file' | 'directory'])[] = [
  ['.git/hooks', 'directory'],
  ['.git/config', 'file'],
  ['.git/info', 'directory'],
]

/** Host paths of an empty file and an empty folder, readable by the jail's user. */
export interface Placeholders {
  readonly emptyFile: string
  readonly emptyFolder: string
}

/** The overlays for one run, and the mount points bubblewrap will create on the host. */
export interface ProtectedMountPlan {
  readonly overlays: JailBind[]
  readonly hiddenFolders: string[]
  /** Host paths that did not exist and will appear as mount points: remove them afterwards. */
  readonly createdMountPoints: string[]
}

/**
 * Plans the overlays for a workspace folder `root` mounted read-write.
 *
 * @throws EitriError `protected_path` when a protected path is a symbolic link: what it points
 *   to cannot be protected inside the jail, so the jail refuses to start rather than leave it open.
 */
export function planProtectedMounts(options: {
  root: string
  placeholders: Placeholders
  /** Extra protected patterns from the configuration; existing literal bases are mounted. */
  extraPatterns?: readonly string[]
  /** Workspace-relative private paths (eitri's state or config inside the workspace). */
  privatePaths?: readonly string[]
  /** False when the whole workspace is mounted read-only: only private paths need hiding. */
  protect?: boolean
}): ProtectedMountPlan {
  const plan: ProtectedMountPlan = { overlays: [], hiddenFolders: [], createdMountPoints: [] }
  hidePrivate(plan, options)
  if (options.protect === false) return plan
  const git = lstat(path.join(options.root, '.git'))
  if (git?.isSymbolicLink() === true) refuseLink('.git')
  if (git?.isDirectory() === true) {
    // Bound onto itself, .git becomes a mount point: `mv .git elsewhere` then fails (EBUSY).
    plan.overlays.push({
      source: path.join(options.root, '.git'),
      target: `${JAIL_WORKSPACE}/.git`,
      writable: true,
    })
    for (const [relative, kind] of GIT_ENTRIES) protect(plan, options, relative, kind)
  } else if (git !== undefined) {
    // A .git file (worktree, submodule) is protected as is. A missing one gets no placeholder:
    // a repository a program makes (`git init`) works in the jail and is not written back.
    protect(plan, options, '.git', 'file')
  }
  for (const [relative, kind] of ROOT_ENTRIES) protect(plan, options, relative, kind)
  for (const pattern of options.extraPatterns ?? []) {
    const base = literalBase(pattern)
    if (base === undefined) continue
    const stat = lstat(path.join(options.root, base))
    if (stat?.isSymbolicLink() === true) refuseLink(base)
    if (stat !== undefined) plan.overlays.push(readOnly(options.root, base))
  }
  return plan
}

/** Private paths disappear behind an empty folder or file; they exist, so nothing is created. */
function hidePrivate(
  plan: ProtectedMountPlan,
  options: { root: string; placeholders: Placeholders; privatePaths?: readonly string[] },
): void {
  for (const relative of options.privatePaths ?? []) {
    const stat = lstat(path.join(options.root, relative))
    if (stat === undefined) continue
    const target = `${JAIL_WORKSPACE}/${relative}`
    if (stat.isDirectory()) plan.hiddenFolders.push(target)
    else plan.overlays.push({ source: options.placeholders.emptyFile, target, writable: false })
  }
}

/** Removes the mount points a run left behind, if they are still empty placeholders. */
export function removeMountPoints(paths: readonly string[]): void {
  for (const hostPath of [...paths].reverse()) {
    const stat = lstat(hostPath)
    if (stat === undefined) continue
    try {
      if (stat.isDirectory() && fs.readdirSync(hostPath).length === 0) fs.rmdirSync(hostPath)
      else if (stat.isFile() && stat.size === 0) fs.unlinkSync(hostPath)
    } catch {
      // still mounted by a run in another process, or changed meanwhile: leave it
    }
  }
}

function protect(
  plan: ProtectedMountPlan,
  options: { root: string; placeholders: Placeholders },
  relative: string,
  kind: 'file' | 'directory',
): void {
  const hostPath = path.join(options.root, relative)
  const stat = lstat(hostPath)
  if (stat?.isSymbolicLink() === true) refuseLink(relative)
  if (stat !== undefined) {
    plan.overlays.push(readOnly(options.root, relative))
    return
  }
  const source = kind === 'file' ? options.placeholders.emptyFile : options.placeholders.emptyFolder
  plan.overlays.push({ source, target: `${JAIL_WORKSPACE}/${relative}`, writable: false })
  plan.createdMountPoints.push(hostPath)
}

function readOnly(root: string, relative: string): JailBind {
  return {
    source: path.join(root, relative),
    target: `${JAIL_WORKSPACE}/${relative}`,
    writable: false,
  }
}

/** `secrets/**` → `secrets`; `deploy/key.pem` → itself; other globs → undefined. */
function literalBase(pattern: string): string | undefined {
  const scan = picomatch.scan(pattern)
  if (!scan.isGlob) return pattern.replace(/\/$/, '')
  return scan.glob === '**' && scan.base !== '' ? scan.base : undefined
}

function lstat(hostPath: string): fs.Stats | undefined {
  return fs.lstatSync(hostPath, { throwIfNoEntry: false })
}

function refuseLink(relative: string): never {
  throw new EitriError(
    'protected_path',
    `${relative} is a symbolic link: the jail cannot keep what it points to read-only, so it will not start. Replace the link with the folder or file itself.`,
  )
}

/**
 * The folder of a jail's placeholders (an empty file and an empty folder, read-only), made in
 * the temporary root; removed by the jail when it closes.
 */
export function makePlaceholders(temporaryRoot: string | undefined): {
  root: string
  placeholders: Placeholders
} {
  const root = fs.mkdtempSync(ownedPrefix('jail', temporaryRoot))
  fs.chmodSync(root, 0o755)
  const emptyFile = path.join(root, 'empty-file')
  const emptyFolder = path.join(root, 'empty-folder')
  fs.writeFileSync(emptyFile, '', { mode: 0o444 })
  fs.mkdirSync(emptyFolder, { mode: 0o555 })
  fs.chmodSync(emptyFolder, 0o555)
  return { root, placeholders: { emptyFile, emptyFolder } }
}
