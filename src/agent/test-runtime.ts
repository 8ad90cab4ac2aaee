/**
 * @module agent/test-runtime
 * For tests: a real SQLite store on a temporary file, real workspace lines, and an agent
 * runtime over them; all closed and removed afterwards. Also a test-only program kind that
 * writes a file into its world, so settlement has real changes to merge.
 */
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { TestContext } from 'node:test'
import { openStore } from '../store/open-store.ts'
import { DirectoryTree } from '../workspace/directory-tree.ts'
import { PERSON_PRINCIPAL } from '../workspace/fork-owner.ts'
import { WorkspaceLines, type LinesOptions } from '../workspace/workspace-lines.ts'
import type { AgentProgram } from './agent-program.ts'
import { AgentRuntime } from './agent-runtime.ts'
import type { AgentRuntimeOptions } from './agent-runtime-options.ts'
import { abortableDelay } from './abortable-delay.ts'
import { DETERMINISTIC_PROGRAMS } from './deterministic-programs.ts'
import type { Program, ProgramFactory } from './program.ts'
import { RunLeases, type RunLeasesOptions } from './run-lease.ts'
import { Roster } from './roster.ts'

/** The runtime tests' agents: an echo, a fast and a slow scripted one, two that write a file. */
export const RUNTIME_ROSTER = Roster.of([
  { id: 'echoer', program: { kind: 'echo' } },
  { id: 'fast', program: { kind: 'scripted', delayMs: 10, reply: 'fast' } },
  { id: 'slow', program: { kind: 'scripted', delayMs: 5000, reply: 'slow' } },
  { id: 'writer', program: { kind: 'scripted', reply: 'written by a Run\n', result: 'out.txt' } },
  { id: 'writer2', program: { kind: 'scripted', reply: 'second\n', result: 'two.txt' } },
])

/**
 * The test programs: `echo` as it is; `scripted` writes its `reply` to `result` (a file path)
 * in its world after `delayMs`, when it has a `result` string, else behaves as it does.
 */
export const FILE_WRITING_PROGRAMS: Readonly<Record<string, ProgramFactory>> = Object.freeze({
  echo: DETERMINISTIC_PROGRAMS.echo as ProgramFactory,
  scripted: (def, hire) => {
    const program = def.program as Extract<AgentProgram, { kind: 'scripted' }>
    if (typeof program.result !== 'string')
      return (DETERMINISTIC_PROGRAMS.scripted as ProgramFactory)(def, hire)
    const file = program.result
    return {
      async run(context) {
        await abortableDelay(program.delayMs ?? 0, context.signal)
        const tree = await context.tree()
        await tree.writeFileAtomic(file, Buffer.from(program.reply ?? ''))
        return { status: 'completed', value: file, output: `wrote ${file}` }
      },
    } satisfies Program
  },
})

/**
 * A workspace holding `files`, a store, and a runtime hiring from `line` (main by default);
 * with `leaseOptions`, the runtime's Runs are held by a {@link RunLeases} keeper on that store;
 * `linesOptions` open the lines (`watch: true` as a server does).
 */
export async function runtimeFixture(
  t: TestContext,
  files: Record<string, string> = {},
  options: Partial<AgentRuntimeOptions> = {},
  leaseOptions?: RunLeasesOptions,
  linesOptions: Partial<LinesOptions> = {},
) {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-runs-')))
  const workspace = path.join(base, 'workspace')
  await fs.mkdir(workspace)
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(workspace, name)), { recursive: true })
    await fs.writeFile(path.join(workspace, name), content)
  }
  const lines = await WorkspaceLines.open({
    main: new DirectoryTree(workspace),
    stateDir: path.join(base, 'state'),
    ...linesOptions,
  })
  const url = `sqlite:${path.join(base, 'store.sqlite')}`
  const store = await openStore(url)
  const leases = leaseOptions === undefined ? undefined : await RunLeases.start(store, leaseOptions)
  const runtime = new AgentRuntime({
    store,
    lines,
    line: 'main',
    principal: PERSON_PRINCIPAL,
    leases,
    ...options,
  })
  t.after(async () => {
    // The runtime first: its Runs write to the store and the lines until they stop.
    await runtime.close()
    await leases?.close()
    await store.close()
    await lines.close()
    await fs.rm(base, { recursive: true, force: true })
  })
  const live = (name: string) =>
    fs.readFile(path.join(workspace, name), 'utf8').catch(() => undefined)
  return { base, workspace, lines, live, store, url, leases, runtime }
}
