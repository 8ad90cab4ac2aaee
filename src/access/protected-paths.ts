/**
 * @module access/protected-paths
 * Files a host later runs code from. Writing one lets an agent act outside its confinement the
 * next time a person runs git, opens an editor or starts an agent client, so they are refused
 * for writes, whether or not they exist yet.
 */
import picomatch from 'picomatch'

/**
 * The built-in protected patterns, matched at any depth, case-insensitively (a
 * case-insensitive file system would honour `.VSCode`). Repository folders (`.git`) have a rule
 * of their own, by what may be written rather than by what may not (git-metadata/).
 */
export const DEFAULT_PROTECTED_PATHS: readonly string[] = Object.freeze([
  '.gitmodules',
  '.envrc',
  '.vscode/**',
  '.idea/**',
  '.mcp.json',
  '.claude/**',
  '.codex/**',
  '.cursor/**',
  ...hookManagerPaths(),
])

/**
 * What git-hook managers run from the working tree at a person's next `git commit`, `push` or
 * `checkout`: husky's scripts (`core.hooksPath = .husky/_`, whose stubs run `.husky/<hook>`),
 * a `.githooks` folder (the usual `core.hooksPath`), pre-commit's configuration (a `repo: local`
 * hook's `entry` is any command) and lefthook's configuration files and script folders, in
 * every name and format lefthook reads. A hooks path named in git's configuration is protected
 * too, whatever its name (git-metadata/program-paths.ts); these are protected before any
 * configuration names them, since installing the manager (`npm install`) sets it.
 */
function hookManagerPaths(): string[] {
  // At any depth, `lefthook.yml` covers `.config/lefthook.yml` too.
  const lefthook = ['lefthook', '.lefthook'].flatMap((base) =>
    ['', '-local'].flatMap((local) =>
      ['yml', 'yaml', 'json', 'jsonc', 'toml'].map((format) => `${base}${local}.${format}`),
    ),
  )
  return [
    '.husky/**',
    '.githooks/**',
    '.pre-commit-config.yaml',
    '.pre-commit-config.yml',
    ...lefthook,
    '.lefthook/**',
    '.lefthook-local/**',
  ]
}

/**
 * Files in a user's home that run code at login, in every shell, in git or on a schedule, or
 * that hold keys. Protected (anchored at the home folder) when the workspace contains the home
 * folder: an agent working in `~` must not be able to write them.
 */
export const HOME_PROTECTED_PATHS: readonly string[] = Object.freeze([
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.profile',
  '.zshrc',
  '.zshenv',
  '.zprofile',
  '.zlogin',
  '.zlogout',
  '.cshrc',
  '.tcshrc',
  '.xinitrc',
  '.xprofile',
  '.xsession',
  '.pam_environment',
  '.inputrc',
  '.gitconfig',
  '.ssh/**',
  '.gnupg/**',
  '.config/git/**',
  '.config/fish/**',
  '.config/environment.d/**',
  '.config/systemd/**',
  '.config/autostart/**',
  '.config/Code/**',
  '.local/share/systemd/**',
  '.local/bin/**',
  'bin/**',
])

/**
 * The home-folder patterns for a workspace at `workspaceRoot` (both real paths): anchored at
 * the home folder's place in the workspace, none when the home folder is not inside it.
 */
export function homeProtectedPaths(workspaceRoot: string, home: string | undefined): string[] {
  if (home === undefined) return []
  const prefix =
    home === workspaceRoot
      ? ''
      : home.startsWith(`${workspaceRoot}/`)
        ? `${home.slice(workspaceRoot.length + 1)}/`
        : undefined
  if (prefix === undefined) return []
  return HOME_PROTECTED_PATHS.map((pattern) => `${prefix}${pattern}`)
}

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
