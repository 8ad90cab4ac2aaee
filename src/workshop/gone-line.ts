/**
 * @module workshop/gone-line
 * A session whose fork is gone (a person discarded or pruned it, here or from another eitri)
 * reaches it by no door: every read, write and program of the line, its tasks and its
 * knowledge answer one `not_found`
 * naming the fork, what became of it and the way on, rather than writing into a record no
 * listing shows or reading files no merge will bring.
 */
import { EitriError } from '../errors/eitri-error.ts'
import type { KnowledgeBase } from '../ports/knowledge-base.ts'
import type { ProgramSession } from '../ports/program-session.ts'
import type { TaskBoard } from '../ports/task-board.ts'
import { workspaceRefused, type WorkspaceView } from '../ports/workspace-view.ts'

/** The refusal every line-bound door of the session answers. */
export function goneLineError(gone: string): EitriError {
  return new EitriError(
    'not_found',
    `This session's ${gone}, outside this session: nothing can be read, written or run in it any more. Go on in a new fork (workspace_fork {"from":"main"}, then workspace_use it), or on main (workspace_use {"fork":"main"}).`,
  )
}

/** The line's files: every operation answers the refusal. */
export function goneWorkspace(
  line: string,
  error: EitriError,
  redact: (text: string) => string,
): WorkspaceView {
  return workspaceRefused(line, error.message, redact, 'not_found')
}

/** The line's programs: nothing starts; jobs already running can still be read and ended. */
export function gonePrograms(programs: ProgramSession, error: EitriError): ProgramSession {
  const refuse = async (): Promise<never> => {
    throw error
  }
  return {
    availability: () => programs.availability(),
    run: refuse,
    startJob: refuse,
    runOutsideJail: refuse,
    readJob: (id) => programs.readJob(id),
    killJob: (id) => programs.killJob(id),
    stopJobsWiderThan: (level) => programs.stopJobsWiderThan(level),
    close: () => programs.close(),
  }
}

/** The line's tasks: every call answers the refusal (not the store's own `conflict`). */
export function goneTasks(line: string, error: EitriError): TaskBoard {
  const refuse = async (): Promise<never> => {
    throw error
  }
  return { line, create: refuse, createMany: refuse, list: refuse, get: refuse, update: refuse }
}

/** The line's knowledge: every call answers the refusal. */
export function goneKnowledge(line: string, error: EitriError): KnowledgeBase {
  const refuse = async (): Promise<never> => {
    throw error
  }
  return { line, add: refuse, addMany: refuse, get: refuse, search: refuse, links: refuse }
}
