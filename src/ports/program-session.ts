/**
 * @module tool/program-session
 * How a tool runs programs: always confined. The jail layer implements this interface; a
 * context without one cannot run programs at all.
 */

import { EitriError } from '../errors/eitri-error.ts'

/** Whether programs can run, and if not why and how to fix it. */
export type ProgramAvailability =
  | { readonly available: true }
  | { readonly available: false; readonly reason: string; readonly fix: string }

/** One program to run. */
export interface ProgramRequest {
  /** The program and its arguments, run without a shell. */
  readonly command: readonly string[]
  /** How the workspace is mounted. */
  readonly access: 'read-only' | 'workspace-write'
  /** Wall-clock limit of a foreground run. */
  readonly timeoutMs?: number
  /** Characters kept per stream. */
  readonly maxOutputChars?: number
  readonly signal?: AbortSignal
}

/** How the jail bounded a program's memory, and whether that bound stopped it. */
export interface ProgramMemory {
  readonly limitBytes: number
  /**
   * `cgroup`: all the program's processes together, by the memory they really use.
   * `rlimit-data`: each process's private writable memory (no memory cgroup could be made).
   */
  readonly boundBy: 'cgroup' | 'rlimit-data'
  /**
   * Set when the bound stopped it: `oom-kill` when the kernel killed a process over the
   * cgroup's limit, `out-of-memory` when it failed saying it ran out of memory under
   * RLIMIT_DATA.
   */
  readonly exceeded?: 'oom-kill' | 'out-of-memory'
}

/** How a foreground program ended. */
export interface ProgramRun {
  readonly exitCode: number | null
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
  readonly timedOut: boolean
  readonly cancelled: boolean
  readonly truncated: boolean
  readonly durationMs: number
  /** Changes that could not be brought back to the workspace, with the reason. */
  readonly refused?: readonly { path: string; reason: string }[]
  /** Changes left in the jail on purpose (a repository the command made), with the reason. */
  readonly kept?: readonly { path: string; reason: string }[]
  /** Files of the line the jail could not show its programs, with the reason (reported once). */
  readonly hidden?: readonly { path: string; reason: string }[]
  /** How its memory was bounded (jailed runs only). */
  readonly memory?: ProgramMemory
}

/** A background job's state as of one read. */
export interface JobRead {
  readonly id: string
  readonly command: string
  /** What it printed since the last read (stdout and stderr, each bounded). */
  readonly stdout: string
  readonly stderr: string
  readonly running: boolean
  readonly exitCode: number | null
  /** Whether anything the job printed so far, read before or now, showed it wanted the network. */
  readonly wantedNetwork?: boolean
}

/** The programs of one connection or caller: foreground runs and background jobs. */
export interface ProgramSession {
  availability(): Promise<ProgramAvailability>
  /** @throws EitriError `jail_unavailable` when programs cannot run confined. */
  run(request: ProgramRequest): Promise<ProgramRun>
  /** Starts a background job and returns its id. */
  startJob(
    request: Omit<ProgramRequest, 'timeoutMs' | 'signal'> & { readonly label: string },
  ): Promise<string>
  /** Reads a job's new output; undefined for an unknown id. */
  readJob(id: string): JobRead | undefined
  /** Ends a job and everything it started; undefined for an unknown id. */
  killJob(id: string): Promise<JobRead | undefined>
  /**
   * Runs a program OUTSIDE the jail, as the host user in the workspace folder. Only for a call a
   * person approved at full access; dangerous by definition.
   */
  runOutsideJail(request: Omit<ProgramRequest, 'access'>): Promise<ProgramRun>
  /** Ends the jobs started with wider access than `level`; answers their ids. */
  stopJobsWiderThan(level: 'read-only' | 'workspace-write' | 'full-access'): Promise<string[]>
  /** Ends every job of this session. */
  close(): Promise<void>
}

/**
 * The session's programs if the jail can run them.
 *
 * @throws EitriError `jail_unavailable` naming `what` needs the jail, the reason and the fix:
 *   nothing ever runs unconfined in its place.
 */
export async function availablePrograms(
  programs: ProgramSession | undefined,
  what: string,
): Promise<ProgramSession> {
  if (programs === undefined) {
    throw new EitriError(
      'jail_unavailable',
      'This session cannot run programs: no jail is attached to it.',
    )
  }
  const availability = await programs.availability()
  if (!availability.available) {
    throw new EitriError(
      'jail_unavailable',
      `${what} needs the jail, which is unavailable, so nothing ran: ${availability.reason}. To fix: ${availability.fix}.`,
    )
  }
  return programs
}
