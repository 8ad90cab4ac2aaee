/**
 * @module bubblewrap/jail-spec
 * What one jailed program gets: its command, its view of the workspace, its environment and
 * its limits. Plain data; `buildBwrapArgs` turns it into bubblewrap's argv.
 */

/** How the workspace appears at `/workspace`. */
export type WorkspaceMountAccess = 'read-only' | 'read-write'

/** A host path mounted at a path inside the jail. */
export interface JailBind {
  readonly source: string
  readonly target: string
  readonly writable: boolean
}

/** Resource limits on every jailed program. */
export interface JailLimits {
  /** Processes the jail's user may have (RLIMIT_NPROC): bounds fork bombs. @default 256 */
  readonly processes: number
  /**
   * Memory the program may use: all its processes together, in a memory cgroup, where eitri
   * can create one; else each process's private writable memory (RLIMIT_DATA). Never address
   * space (RLIMIT_AS), which breaks WebAssembly, the JVM and Go. Bounds memory bombs.
   * @default 4 GiB
   */
  readonly memoryBytes: number
  /** Largest file a process may write (RLIMIT_FSIZE). @default 1 GiB */
  readonly fileSizeBytes: number
  /** Size of the jail's private `/tmp`. @default 256 MiB */
  readonly tmpBytes: number
}

/** The limits used when none are given. */
export const DEFAULT_JAIL_LIMITS: JailLimits = Object.freeze({
  processes: 256,
  memoryBytes: 4 * 1024 ** 3,
  fileSizeBytes: 1024 ** 3,
  tmpBytes: 256 * 1024 ** 2,
})

/** Where programs see the workspace. */
export const JAIL_WORKSPACE = '/workspace'

/**
 * The programs' home (`HOME`): an empty folder of the jail's read-only root, so no command
 * leaves a dotfile there that a later one obeys (decision 0064).
 */
export const JAIL_HOME = '/home/agent'

/** Everything `buildBwrapArgs` needs. */
export interface JailSpec {
  /** The program and its arguments, run without a shell. */
  readonly command: readonly string[]
  /** The host folder shown at `/workspace`. */
  readonly workspace: string
  readonly workspaceAccess: WorkspaceMountAccess
  /**
   * Binds layered over the workspace, in order: a folder bound onto itself (so it cannot be
   * renamed away), then read-only protected paths and placeholders.
   */
  readonly overlays: readonly JailBind[]
  /** Paths inside the jail hidden behind an empty read-only folder. */
  readonly hiddenFolders: readonly string[]
  /** Further binds (a scratch folder, the Node binary for confined functions). */
  readonly binds: readonly JailBind[]
  /** The environment: cleared, then exactly these names. Never a secret. */
  readonly environment: Readonly<Record<string, string>>
  readonly limits: JailLimits
  /** True when a memory cgroup bounds `limits.memoryBytes`: then no RLIMIT_DATA is set. */
  readonly memoryInCgroup?: boolean
  /** Working directory inside the jail. @default '/workspace' */
  readonly cwd?: string
  /**
   * The user and group the program runs as inside (bubblewrap's `--uid`/`--gid`), for a start
   * from a user namespace where the caller is root (an unprivileged caller's layer host).
   * @default the caller's own
   */
  readonly runAs?: { readonly uid: number; readonly gid: number }
  /**
   * True makes the command PID 1 of the jail (bubblewrap's `--as-pid-1`): it must reap what is
   * reparented to it. A warm jail's reaper, which a command cannot trace (decision 0036).
   * @default false: bubblewrap itself is PID 1
   */
  readonly asPidOne?: boolean
  /**
   * A seccomp program bubblewrap installs on its PID 1 and the command (`--seccomp FD`), read
   * from this descriptor, which the start must hold open: for a jail whose PID 1 installs none.
   * @default none
   */
  readonly seccompFd?: number
}
