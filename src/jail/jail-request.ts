/**
 * @module jail/jail-request
 * What a jail is asked to run and what it answers: a program with its access, deadline and
 * output bounds; how a foreground run ended; a program left running in the background.
 */
import type { JailBind, JailLimits } from '../bubblewrap/jail-spec.ts'
import type { ProgramMemory } from '../ports/program-session.ts'
import type { JailedExit, JailedProcess } from './jailed-process.ts'
import type { SyncReport } from './workspace-mirror.ts'

/** Default wall-clock limit of a foreground run. */
export const DEFAULT_JAIL_TIMEOUT_MS = 60_000

/** One program to run. */
export interface JailRequest {
  readonly command: readonly string[]
  /** `read-only` mounts the workspace read-only; `workspace-write` read-write. */
  readonly access: 'read-only' | 'workspace-write'
  /** @default 60 s; ignored by `start` */
  readonly timeoutMs?: number
  /** Characters kept per stream. @default 30,000 */
  readonly maxOutputChars?: number
  readonly limits?: Partial<JailLimits>
  /** Extra environment names (never secrets). */
  readonly environment?: Readonly<Record<string, string>>
  /**
   * Further binds: a scratch folder, the Node binary. Chosen by trusted code only (eitri's own
   * runtime binds, the confine jail executor's, a library caller's); no tool input reaches
   * them. A bind shows the host's own inodes: a unix socket or named pipe below its source can
   * be connected to or opened for writing from the jail even when the bind is read-only
   * (decision 0046 keeps them out of the workspace with an overlay; a bind gets none). Bind
   * only folders whose sockets and pipes the jailed program may reach (decision 0057).
   */
  readonly binds?: readonly JailBind[]
  readonly cwd?: string
  readonly stdin?: string
  readonly signal?: AbortSignal
  /** Called with every chunk of output as it arrives. */
  readonly onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void
  /**
   * Who the command runs for (one session's programs): only commands of the same sharer run
   * in one warm jail, whose /tmp, IPC objects and waiting processes outlive each command, as a
   * shell's do for its own commands. Undefined: the jail's caller itself, one sharer.
   */
  readonly sharer?: string
}

/** How a foreground run ended and what it printed. */
export interface JailResult extends JailedExit {
  readonly stdout: string
  readonly stderr: string
  /** True when either stream was cut. */
  readonly truncated: boolean
  /** For a mirrored workspace: what went back to the host and what the policy refused. */
  readonly sync?: SyncReport
  /** How its memory was bounded, and whether that stopped it. */
  readonly memory?: ProgramMemory
}

/** A program running in the background. */
export interface JailJob {
  /** @internal */
  readonly process: JailedProcess
  /** Resolves after the program ended and its changes went back to the host. */
  readonly finished: Promise<JailResult>
}
