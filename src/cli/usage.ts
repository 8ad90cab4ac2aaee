/**
 * @module cli/usage
 * The help text of `eitri`.
 */
import { COMMANDS } from './command-table.ts'

/** One line for errors: every command of the command table. */
export const USAGE_LINE = `Usage: eitri <${Object.keys(COMMANDS).join('|')}> [options]   (eitri --help for more)`

/** The full help. */
export const HELP = `eitri: a workshop for LLM agents: confined tools on a workspace, over MCP or as a library.

Usage:
  eitri demo                         show eitri at work on a scratch workspace (no API key, no server)
  eitri serve [options]              serve the tools over MCP (stdio by default)
  eitri tools [--json]               list the tools offered (with --json, their schemas)
  eitri call TOOL JSON [options]     run one tool call and print its result
  eitri eval CODE [options]          run JavaScript or TypeScript once in the code sandbox (js_eval)
  eitri repl [options]               a terminal REPL over one js_eval session
  eitri exec [options] -- CMD ARGS   run one command in the jail; exits with its status
  eitri mcp-config [--http PORT]     print MCP client settings (Claude Code, Codex, Cursor) for this copy
  eitri approvals [--json]           every recorded decision on an action that needed a person
  eitri runs [--status S] [--json]   the Runs (agent tasks and turns), newest first; a dead owner's Run shows as interrupted
  eitri runs show RUN | cancel RUN   one Run with its journal and child Runs; ask the process running it to cancel it
  eitri runs merge RUN | discard RUN a Run kept for review: merge its fork (asks you before main), or throw it away
  eitri run --agent ID --task TEXT   hire one agent as a Run, show it and its children on stderr, print its value
  eitri bench --env ENV --model M    program-bench: an llm root agent works one environment; a verifier reads only
                                     what it left and prints reward (1 or 0), checks, model steps, dollars and time.
                                     ENV: join-v1 | race-v1 | self-programming-v1 | fix-test-v1; M: PROVIDER:MODEL
                                     (from the configuration's providers and prices, or built in; needs its key)
                                     or scripted (the environment's own script, no key)
  eitri fork [NAME] [--fork FROM]    a new fork of main (or of FROM); copies nothing
  eitri forks [--prune] [--json]     the forks: state (open, merged, discarded), files changed, last activity;
                                     --prune removes merged, discarded and empty idle forks and old snapshots
  eitri log [FORK] [--json]          the snapshots of main (one before each call that may change it); with FORK, its history
  eitri restore SNAPSHOT [PATH...]   put main (or PATHs) back as at a snapshot, git branches too; --force also what you changed since
  eitri diff FORK                    what a fork changed, as unified diffs
  eitri merge FORK | undo-merge      merge a fork into its parent (you approve by running it); undo the last merge into main
                                     (the merged fork stays read-only; its changes go on in a new fork of main)
  eitri discard FORK                 throw a fork away
  eitri --help | --version

Options:
  --workspace DIR         the workspace folder (default: the current directory)
  --http [HOST:]PORT      serve: streamable HTTP at /mcp instead of stdio (host default 127.0.0.1; port 0 picks one)
  --token TOKEN           serve, mcp-config: the HTTP bearer token (or EITRI_TOKEN; default: one kept in the state folder)
  --no-token              serve: HTTP on loopback without a token (every local user can then use the tools)
  --tools NAME,...        offer only these tools
  --access LEVEL          read-only | workspace-write (default) | full-access (DANGEROUS: with approval, programs may run outside the jail)
  --approval POLICY       untrusted | on-request (default) | never: when to ask a person
  --mode NAME             start in a mode: default, plan (read-only), or one from the configuration
  --fork FORK             call, exec: act on a fork instead of main
  --isolate               serve: every connection works on a fork of its own; main only with a person's approval
  --force                 restore: also restore files you changed since the snapshot
  --prune                 forks: delete the snapshots beyond the retention (configuration: snapshots.keep, snapshots.maxAgeDays)
  --status STATUS         runs: only Runs with this status (running, waiting, completed, failed, cancelled)
  --agent ID              run: the agent to hire
  --task TEXT             run: what the agent is to do
  --roster FILE           run: the roster file ({"agents": [...]}) to hire from (default: the configuration's agents)
  --settlement POLICY     run: automatic (default: merge the Run's changes, asking before main) | review | discard
  --yes                   run: merge the Run's changes into main without asking (only that merge)
  --json                  machine-readable output
  --state-dir DIR         eitri's state folder (default: $EITRI_STATE_DIR, else $XDG_STATE_HOME/eitri)
  --config FILE           configuration file (default: $EITRI_CONFIG, else $XDG_CONFIG_HOME/eitri/config.json)
  --store URL             sqlite:PATH or postgres://USER@HOST/DB (default: $EITRI_STORE, else a SQLite file in the state folder)

Exit status: 0 success, 1 a tool answered an error (run: the Run failed; bench: reward 0), 2 a wrong
command line, 3 run: the Run is waiting, 130 interrupted (run: Ctrl-C cancelled the Run).
`
