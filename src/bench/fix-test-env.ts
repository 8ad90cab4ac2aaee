/**
 * @module bench/fix-test-env
 * `fix-test-v1`: a small repository whose `node --test` test fails on a bug in its code. The
 * root fixes it with file tools (and may run the test in its shell); it passes when the test
 * passes in the workspace its world merged into and nothing but the code file changed.
 */
import fs from 'node:fs/promises'
import path from 'node:path'
import { check, describeRun, type BenchEnvironment } from './bench-environment.ts'
import { answer, callTool } from './scripted-model.ts'

/** The repository as it starts: the bug is `-` where `+` belongs. */
const FIXTURE: Readonly<Record<string, string>> = {
  'package.json': '{ "name": "sums", "type": "module", "scripts": { "test": "node --test" } }\n',
  'sum.js': 'export function sum(a, b) {\n  return a - b\n}\n',
  'sum.test.js':
    // Loaded with import(): a static import of the test runner here would mark this module as
    // test-only code, which the build leaves out.
    "import assert from 'node:assert/strict'\nimport { sum } from './sum.js'\n\nconst { test } = await import('node:test')\n\ntest('sum adds', () => {\n  assert.equal(sum(2, 3), 5)\n})\n",
}

/** The one file a fix may change. */
const CODE_FILE = 'sum.js'

/** The files of `root`, by relative path, with their text. */
async function filesOf(root: string): Promise<Map<string, string>> {
  const files = new Map<string, string>()
  for (const entry of await fs.readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const full = path.join(entry.parentPath, entry.name)
    files.set(path.relative(root, full), await fs.readFile(full, 'utf8'))
  }
  return files
}

/** What `node --test` printed, shortened for a check's detail. */
function tail(text: string): string {
  return text.length <= 600 ? text : `…${text.slice(-600)}`
}

/** The fix-a-failing-test environment. */
export const fixTestV1: BenchEnvironment = {
  name: 'fix-test-v1',
  task: 'The test of this repository fails (run it with `node --test`). Fix the code, not the test, and change nothing else. When the test passes, answer "fixed" (as a JSON string, with its quotes) and nothing else.',
  tools: ['read_file', 'edit_file', 'write_file', 'shell'],
  access: 'workspace-write',
  expected: 'fixed',
  script: [
    callTool('read_file', { path: CODE_FILE }),
    callTool('edit_file', { path: CODE_FILE, old_string: 'a - b', new_string: 'a + b' }),
    answer('"fixed"'),
  ],
  setup: async (workspace) => {
    for (const [name, text] of Object.entries(FIXTURE)) {
      await fs.writeFile(path.join(workspace, name), text)
    }
  },
  verify: async (facts) => {
    const { root, runs, workspace } = facts
    const files = await filesOf(workspace)
    const changed = [...new Set([...files.keys(), ...Object.keys(FIXTURE)])]
      .filter((name) => files.get(name) !== FIXTURE[name])
      .sort()
    const others = changed.filter((name) => name !== CODE_FILE)
    // The test runs the model's code: in the jail, read-only, never on the host.
    const run = await facts.runInJail(['node', '--test'])
    const test = {
      ok: run.exitCode === 0,
      detail:
        run.exitCode === 0
          ? 'node --test passes in the merged workspace'
          : `node --test exits ${String(run.exitCode)}: ${tail(run.stdout + run.stderr)}`,
    }
    return [
      check('world merged', root.settlementStatus === 'merged', `root is ${describeRun(root)}`),
      check(
        'no other Runs',
        runs.length === 1,
        runs.length === 1 ? 'only the root ran' : runs.map(describeRun).join('; '),
      ),
      check('test passes', test.ok, test.detail),
      check(
        'nothing else changed',
        others.length === 0 && changed.includes(CODE_FILE),
        `changed: ${changed.join(', ') || '(nothing)'}`,
      ),
    ]
  },
}
