/**
 * @module workshop/default-roster
 * The agents eitri ships, so a person with a provider key can run one command on their
 * repository: `coder` (edits files, runs commands and code) and `reviewer` (reads only). The
 * configuration's `agents` come on top: a configured agent with the same id replaces the
 * shipped one, others are added beside them.
 */

/** The shipped model: Anthropic's Claude Sonnet 4, whose price the built-in table knows. */
export const DEFAULT_MODEL_POLICY = Object.freeze({
  provider: 'anthropic',
  model: 'claude-sonnet-4-20250514',
})

/** The shipped agents' definitions, as a configuration would write them. */
export const DEFAULT_AGENTS: readonly Readonly<Record<string, unknown>>[] = Object.freeze([
  {
    id: 'coder',
    name: 'Coder',
    prompt:
      'You are a careful software engineer working in a repository. Read the code before you change it, make the smallest change that does the task, run the tests or the program when you can, and finish with a short summary of what you changed and why.',
    tools: ['read_file', 'write_file', 'edit_file', 'glob', 'grep', 'shell', 'js_eval'],
    access: 'workspace-write',
    modelPolicy: DEFAULT_MODEL_POLICY,
    program: { kind: 'llm', maxModelSteps: 32, budgetDollars: 1 },
  },
  {
    id: 'reviewer',
    name: 'Reviewer',
    prompt:
      'You are a code reviewer. Read the code the task is about and answer with what is wrong or risky, most important first, each with the file and line; you cannot change files.',
    tools: ['read_file', 'glob', 'grep'],
    access: 'read-only',
    modelPolicy: DEFAULT_MODEL_POLICY,
    program: { kind: 'llm', maxModelSteps: 16, budgetDollars: 0.5 },
  },
])

/** The roster's agents: the shipped ones, each replaced by a configured one of the same id. */
export function withDefaultAgents(
  configured: readonly Readonly<Record<string, unknown>>[],
): Readonly<Record<string, unknown>>[] {
  const ids = new Set(configured.map((agent) => agent['id']))
  return [...DEFAULT_AGENTS.filter((agent) => !ids.has(agent['id'])), ...configured]
}
