/**
 * @module errors/eitri-error
 * The one error class of eitri. Branch on `code`, never on `message`.
 */

/**
 * Every stable error code eitri uses, in tool results and in thrown errors, with what it means.
 * The one list of codes: {@link ErrorCode} is its keys.
 */
export const ERROR_CODES = {
  invalid_input: "a tool's input failed validation; the message names the field.",
  not_available: "the tool exists but is outside this agent's toolset.",
  unknown_tool: 'no tool has that name.',
  path_outside_workspace: 'a path resolves outside the workspace (`..`, absolute, symlink).',
  protected_path: "the path is one a host later runs code from, or eitri's own state.",
  not_found: 'the file or folder does not exist.',
  is_directory: 'the path names a folder where a file was expected.',
  not_directory: 'the path names a file where a folder was expected.',
  binary_file: 'a text operation met a binary file.',
  file_too_large: 'the file is over the size a text operation reads at once.',
  no_match: "an edit's `old_string` was not found.",
  ambiguous_match: "an edit's `old_string` was found several times; give more context.",
  cancelled: "the call's signal aborted.",
  tool_failed: 'the tool threw something unexpected (a fault in the tool, not the input).',
  config_invalid: 'the configuration file or a flag is wrong.',
  usage: 'a command line could not be parsed.',
  jail_unavailable: 'bubblewrap is missing or cannot create its namespaces; nothing ran.',
  permission_denied: 'a policy refused the command or action.',
  timeout: 'the call ran past its time limit and was stopped.',
  sandbox_violation: 'a confined call wrote outside the paths it may write.',
  not_running: 'a background job is unknown or already gone.',
  read_only_access:
    'a write under read-only access, or to a line that takes none (a read-only or merged fork); the message says why.',
  quota_exceeded:
    "a fork's write quota would be exceeded; the message says how much is used and what to do.",
  merge_conflict:
    'a merge met paths both lines changed; nothing was merged, and the conflicts are listed.',
  invalid_definition: 'a tool was defined wrongly; thrown when it is defined, never at a call.',
  eval_error: "code run by `js_eval` threw; the message and stack are the guest's own.",
  memory_limit: "an eval went over its session's memory limit; that session was reset.",
  sandbox_reset: 'the code sandbox restarted or the session ended; definitions are gone.',
  limit_exceeded: 'a budget or size limit was reached (tool calls per eval, response size).',
  store_unavailable:
    'the store cannot be opened or reached (bad URL, server down, not a database, written by a newer eitri); the message says how to fix it.',
  conflict: 'the stored state forbids the change (a closed line, a finished Run, a duplicate id).',
  state_corrupt:
    "one of eitri's own state files (a log, a journal, a catalog) is unreadable or holds something invalid; the message names the file, the line and what to do.",
} as const satisfies Record<string, string>

/** A stable error code; see {@link ERROR_CODES} for what each means. */
export type ErrorCode = keyof typeof ERROR_CODES

const MARKER = Symbol.for('eitri.error')

/**
 * An error with a stable code. When a tool's `execute` throws one, the caller sees an error
 * result with this code and message, so messages must say what was refused and what to do.
 *
 * @example
 * throw new EitriError('not_found', 'File not found: notes.md')
 */
export class EitriError<
  Data extends Record<string, unknown> = Record<string, unknown>,
> extends Error {
  readonly code: ErrorCode
  readonly data: Data
  readonly [MARKER] = true

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; data?: Data } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'EitriError'
    this.code = code
    this.data = options.data ?? ({} as Data)
  }

  /** True for an EitriError from any copy of this module. */
  static isInstance(value: unknown): value is EitriError {
    return typeof value === 'object' && value !== null && MARKER in value
  }
}
