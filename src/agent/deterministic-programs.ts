/**
 * @module agent/deterministic-programs
 * The programs that need no model: `echo` answers its task, `scripted` answers what its
 * definition says. Both may wait `delayMs` first, to stand in for slow work, and stop at once
 * when cancelled. They touch no files: their worlds stay unchanged.
 */
import type { AgentProgram } from './agent-program.ts'
import { abortableDelay } from './abortable-delay.ts'
import type { Program, ProgramFactory } from './program.ts'

/** The text of a value for a Run's `output`: a string as it is, anything else as JSON. */
export function outputText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '')
}

/** `echo`: the value is the task. */
export function echoProgram(program: { readonly delayMs?: number | undefined }): Program {
  return {
    async run({ task, signal }) {
      await abortableDelay(program.delayMs ?? 0, signal)
      return { status: 'completed', value: task, output: outputText(task) }
    },
  }
}

/**
 * `scripted`: the value is `result` when given, else `reply`; the output is `reply` when given.
 * With `fail`, the Run fails with that error instead.
 */
export function scriptedProgram(program: {
  readonly delayMs?: number | undefined
  readonly reply?: string | undefined
  readonly result?: unknown
  readonly fail?: string | undefined
}): Program {
  return {
    async run({ signal }) {
      await abortableDelay(program.delayMs ?? 0, signal)
      if (program.fail !== undefined) return { status: 'failed', error: program.fail }
      const value = program.result !== undefined ? program.result : program.reply
      return { status: 'completed', value, output: program.reply ?? outputText(value) }
    },
  }
}

/** The program factory of every kind this version runs. */
export const DETERMINISTIC_PROGRAMS: Readonly<Record<string, ProgramFactory>> = Object.freeze({
  echo: (def) => echoProgram(def.program as Extract<AgentProgram, { kind: 'echo' }>),
  scripted: (def) => scriptedProgram(def.program as Extract<AgentProgram, { kind: 'scripted' }>),
})
