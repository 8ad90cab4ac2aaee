/**
 * @module access/command-policy/command-policy
 * The command policy: every shell command an agent runs is judged here before it runs in the
 * jail. It decides whether the command runs at once (`allow`, `jail`), after a person approves
 * it (`ask`), or never (`deny`); the jail, not this policy, is what confines it.
 *
 * `allow` runs without a question even under `--approval untrusted`, so it is given only from
 * closed lists: a program (readers.ts) or git subcommand (rules/git-read-only.ts) known to only
 * read, with every option it carries on that program's list of options known to only read.
 * Options are read the way the program reads them (bundled short options, values attached or
 * in the next word, `--` ending them); an option that is not listed, an abbreviated long option
 * (git and GNU programs resolve `--out` to `--output`), or a word the shell only knows at run
 * time where an option could stand (`"$f"`, a glob such as `*`) keeps the command out of
 * `allow`. Builtins that set variables (`read`, `printf -v`, `declare`, …) count as
 * assignments, and only lowercase names are harmless (rules/environment.ts). Anything else is
 * at least `jail`. The `ask` and `deny` lists work the other way, and no such list is complete:
 * they catch the common ways to destroy work; the jail and the workspace's history are what
 * make the others recoverable.
 */
import type { Parser } from 'web-tree-sitter'
import type { CommandJudgement as PortJudgement } from '../../ports/access-context.ts'
import { judgementOf, type CommandJudgement, type CommandRule } from './command-judgement.ts'
import { judgeScript } from './judge-script.ts'
import { loadBashParser } from './load-bash-parser.ts'

/**
 * Commands longer than this are refused unread. Judging is synchronous; at this length it takes
 * about 0.3 s for dense shell (0.5 s before the JIT warms up) and 0.1 s for a here-document
 * (docs/decisions/0003-shell-parser.md), so no command blocks the event loop for long.
 */
export const MAX_COMMAND_CHARACTERS = 128 * 1024

/** What a caller may add to a command. */
export interface CommandRequest {
  /** The command asks for wider access than the jail gives (a person must approve it). */
  readonly escalate?: boolean
}

/**
 * Judges shell commands with a real bash parser. Load once, judge many times; `close()` frees
 * the parser's WebAssembly memory.
 *
 * @example
 * await using policy = await CommandPolicy.load()
 * policy.judge('sudo ls') // { verdict: 'deny', rule: 'privilege', reason: 'sudo is never allowed: …', parts: […] }
 * policy.judge('ls -la | wc -l') // { verdict: 'allow', rule: 'read-only', … }
 */
export class CommandPolicy {
  #parser: Parser | undefined

  private constructor(parser: Parser) {
    this.#parser = parser
  }

  /**
   * Loads the parser (about 15 ms; see docs/decisions/0003-shell-parser.md).
   *
   * @throws the signal's reason when it aborts, or the error of loading the grammar.
   */
  static async load(options: { signal?: AbortSignal } = {}): Promise<CommandPolicy> {
    return new CommandPolicy(await loadBashParser(options))
  }

  /**
   * Judges `command`. Never throws: invalid shell is `deny` with the parser's message, an empty
   * command is `allow` with the rule `empty`. (Typed with the port's generic judgement, which
   * the library exports, rather than this folder's alias of it.)
   */
  judge(command: string, request: CommandRequest = {}): PortJudgement<CommandRule> {
    const parser = this.#parser
    if (parser === undefined) {
      return refused(
        command,
        'policy-closed',
        'the command policy was closed; nothing can be judged or run through it',
      )
    }
    if (command.length > MAX_COMMAND_CHARACTERS) {
      return refused(
        command.slice(0, 80),
        'too-long',
        `the command is longer than ${MAX_COMMAND_CHARACTERS} characters; write large content to a file with a file tool and run a short command`,
      )
    }
    let parts
    try {
      parts = judgeScript(parser, command, 0)
    } catch (error) {
      // Fail closed: a fault in the parser or a rule must never let a command through.
      const message = error instanceof Error ? error.message : String(error)
      return refused(command, 'unparseable', `the policy could not read the command (${message})`)
    }
    if (request.escalate === true) {
      parts.push({
        command,
        verdict: 'ask',
        rule: 'escalation',
        reason: 'the command asks for wider access than the jail gives; a person must approve it',
      })
    }
    return judgementOf(parts)
  }

  /** Frees the parser. Idempotent; `judge` answers `deny` afterwards. */
  close(): void {
    this.#parser?.delete()
    this.#parser = undefined
  }

  [Symbol.dispose](): void {
    this.close()
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.close()
  }
}

function refused(
  command: string,
  rule: 'policy-closed' | 'too-long' | 'unparseable',
  reason: string,
): CommandJudgement {
  return judgementOf([{ command, verdict: 'deny', rule, reason }])
}
