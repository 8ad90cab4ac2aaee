/**
 * @module jail/jail-options
 * What a jail is built on: the workspace, its views and private paths, bubblewrap, the
 * temporary root, binds, limits and how programs see the workspace.
 */
import type { WriteBackLimits } from '../access/write-back/plan-write-back.ts'
import type { JailBind, JailLimits } from '../bubblewrap/jail-spec.ts'
import type { WorkspaceView } from '../ports/workspace-view.ts'
import type { WorkspaceTree } from '../workspace/workspace-tree.ts'
import type { ForkBelow } from './overlay/fork-layer.ts'

/** What a jail is built on. */
export interface JailOptions {
  /** The workspace folder. */
  readonly tree: WorkspaceTree
  /** The same folder behind the path policy: what a mirror writes back goes through it. */
  readonly view: WorkspaceView
  /** Extra protected patterns from the configuration. */
  readonly protectedPaths?: readonly string[]
  /** Host paths of eitri's state and configuration, hidden if inside the workspace. */
  readonly privatePaths?: readonly string[]
  /** Workspace-relative paths hidden like private paths (resolved from their real paths). */
  readonly hiddenPaths?: readonly string[]
  /** The bubblewrap program. @default 'bwrap' */
  readonly bwrap?: string
  /** Where the jail keeps placeholders and the mirror. @default os.tmpdir() */
  readonly temporaryRoot?: string
  /**
   * Binds every program gets (the blob drive, read-only at /drive). As trusted as
   * `JailRequest.binds`: a socket or pipe below a source is reachable from the jail.
   */
  readonly mounts?: readonly JailBind[]
  /** What one command may bring back. @default 64 MiB a file, 256 MiB a command */
  readonly writeBack?: WriteBackLimits
  /**
   * How programs see the workspace: `overlay` (a fresh copy-on-write layer per command, for a
   * root caller on a workspace folder), `mirror` (a copy kept in step). `auto` takes the
   * overlay where it can run and the mirror elsewhere. @default 'auto'
   */
  readonly layers?: 'auto' | 'overlay' | 'mirror'
  /**
   * For a fork's jail: main's folder and where the fork differs from it. The fork's overlays
   * then show main's folder (with its ignored files and `.git`) below the fork's own layer;
   * without it a fork is mirrored whole.
   */
  readonly below?: ForkBelow
  /** Limits of every program (a request's own override them). @default DEFAULT_JAIL_LIMITS */
  readonly limits?: Partial<JailLimits>
  /** False bounds memory by RLIMIT_DATA alone, never a cgroup (tests). @default true */
  readonly memoryCgroups?: boolean
  /**
   * True makes plain foreground commands wait for the warm jail to start and run in it. By
   * default they run cold (one bubblewrap each, as background jobs do) until the warm jail,
   * started beside the first of them, is ready: a session's first command then costs a cold
   * start, not a warm jail's. For tests of the warm jail itself. @default false
   */
  readonly waitForWarmJail?: boolean
  /** How long jails started ahead of cold starts wait unused (tests). @default AHEAD_IDLE_MS */
  readonly aheadIdleMs?: number
}
