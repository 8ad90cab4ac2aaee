/**
 * @module access/protected-paths
 * Files a host later runs code from. Writing one lets an agent act outside its confinement the
 * next time a person runs git, opens an editor or starts an agent client, so they are refused
 * for writes, whether or not they exist yet.
 */
import picomatch from 'picomatch'

/**
 * The built-in protected patterns, matched at any depth (a nested repository's hooks run too),
 * case-insensitively (a case-insensitive file system would honour `.Git/hooks`).
 * `.git` itself is here because a `.git` *file* can redirect git to a folder of hooks.
 */
export const DEFAULT_PROTECTED_PATHS: readonly string[] = Object.freeze([
  '.git',
  '.git/hooks/**',
  '.git/config',
  '.git/info/**',
  '.gitmodules',
  '.envrc',
  '.vscode/**',
  '.idea/**',
  '.mcp.json',
  '.claude/**',
  '.codex/**',
  '.cursor/**',
])

/** Decides whether a workspace-relative path is protected. */
export type ProtectedPathMatcher = (relativePath: string) => string | undefined

/**
 * Builds a matcher over the built-in patterns (any depth) and `extra` patterns from the
 * configuration (anchored at the workspace root, glob syntax). Returns the matching pattern.
 */
export function protectedPathMatcher(extra: readonly string[] = []): ProtectedPathMatcher {
  const rules = [
    ...DEFAULT_PROTECTED_PATHS.map((pattern) => ({ pattern, test: compile(`**/${pattern}`) })),
    ...extra.map((pattern) => ({ pattern, test: compile(pattern) })),
  ]
  return (relativePath) => rules.find((rule) => rule.test(relativePath))?.pattern
}

function compile(pattern: string): (path: string) => boolean {
  return picomatch(pattern, { dot: true, nocase: true })
}
