/**
 * @module confine/allowed-roots
 * Where a confined call may write, and which of its writes landed elsewhere. Paths and roots
 * are compared after resolving symbolic links in the longest part of each that exists, so a
 * link cannot make an outside path look inside, nor an inside one outside.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { SandboxMode } from '../tool/tool-governance.ts'

/**
 * The roots writes may land in: the scratch folder in `tempdir` mode only, plus `allowPaths`.
 * In `read-only` and `container` mode even a write in the scratch folder is outside, unless
 * `allowPaths` covers it.
 */
export function allowedRoots(
  mode: SandboxMode,
  workdir: string,
  allowPaths: readonly string[],
): string[] {
  return [...(mode === 'tempdir' ? [workdir] : []), ...allowPaths]
}

/**
 * The written paths (relative ones taken from `workdir`) that are neither equal to a root nor
 * under one, in the order given.
 */
export function findViolations(
  written: Iterable<string>,
  roots: readonly string[],
  workdir: string,
): string[] {
  const canonicalRoots = roots.map(canonicalPath)
  const violations: string[] = []
  for (const writtenPath of written) {
    const canonical = canonicalPath(path.resolve(workdir, writtenPath))
    const inside = canonicalRoots.some(
      (root) => canonical === root || canonical.startsWith(root === '/' ? '/' : `${root}/`),
    )
    if (!inside) violations.push(writtenPath)
  }
  return violations
}

/**
 * An absolute path with the symbolic links of its longest existing ancestor (the path itself
 * when it exists) resolved, and the rest appended as written.
 *
 * @example
 * canonicalPath('/tmp/link-to-data/new/file.txt') // '/srv/data/new/file.txt'
 */
export function canonicalPath(hostPath: string): string {
  let existing = path.resolve(hostPath)
  const rest: string[] = []
  for (;;) {
    try {
      return path.join(fs.realpathSync(existing), ...rest.reverse())
    } catch {
      const parent = path.dirname(existing)
      if (parent === existing) return path.resolve(hostPath)
      rest.push(path.basename(existing))
      existing = parent
    }
  }
}
