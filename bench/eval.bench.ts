/**
 * The code sandbox, each figure beside node:vm (no boundary at all, for scale) and
 * quickjs-emscripten (a WebAssembly interpreter, the other real boundary), with the same
 * snippets:
 *
 * - a warm eval of `1+1` in an existing session;
 * - creating a session;
 * - one `fs.readFile` capability call (the eval that makes it, and what the call adds);
 * - `tools.call('read_file')` from inside an eval against the same call made directly;
 * - the resident memory an idle session adds (100 sessions open, the cap raised).
 */
import { readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import vm from 'node:vm'
import { getQuickJS } from 'quickjs-emscripten'
import { IsolateEngine } from '../src/entry/eval.ts'
import { openWorkshop } from '../src/index.ts'
import { medianMicros, micros, report } from './measure.ts'

const ITERATIONS = 2000
const SESSIONS = 100

const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-bench-eval-'))
try {
  const workspace = path.join(scratch, 'workspace')
  await fs.mkdir(workspace)
  const file = path.join(workspace, 'a.txt')
  await fs.writeFile(file, 'some typical text\n'.repeat(100))
  await using workshop = await openWorkshop({
    workspace,
    stateDir: path.join(scratch, 'state'),
    configPath: path.join(scratch, 'config.json'),
  })
  const evaluate = (code: string) => workshop.call('js_eval', { code })
  if ((await evaluate('1+1')).content !== '2') throw new Error('js_eval does not work')

  await using engine = new IsolateEngine()
  const session = await engine.createSession({ memoryLimitMb: 128, namespaces: {} })
  const context = vm.createContext({
    readFile: async (name: string) => fs.readFile(path.join(workspace, name), 'utf8'),
  })
  const QuickJS = await getQuickJS()
  const runtime = QuickJS.newRuntime()
  const quick = runtime.newContext()
  const readFileHandle = quick.newFunction('readFile', (name) =>
    quick.newString(readFileSync(path.join(workspace, quick.getString(name)), 'utf8')),
  )
  quick.setProp(quick.global, 'readFile', readFileHandle)
  readFileHandle.dispose()
  const quickEval = (code: string): void => {
    quick.unwrapResult(quick.evalCode(code)).dispose()
  }

  // A warm eval of 1+1.
  const engineEval = await medianMicros(
    () => session.eval('1+1', { timeoutMs: 10_000 }),
    ITERATIONS,
  )
  const toolEval = await medianMicros(() => evaluate('1+1'), ITERATIONS)
  const vmEval = await medianMicros(
    async () => vm.runInContext('1+1', context) as unknown,
    ITERATIONS,
  )
  const quickWarm = await medianMicros(async () => quickEval('1+1'), ITERATIONS)
  report('warm eval of 1+1 (engine session)', engineEval, vmEval, 'node:vm')
  report('the same', engineEval, quickWarm, 'quickjs-emscripten')
  report('warm eval of 1+1 through js_eval (contract)', toolEval, engineEval, 'engine session')

  // Creating a session.
  const create = await medianMicros(async () => {
    const fresh = await engine.createSession({ memoryLimitMb: 128, namespaces: {} })
    await fresh.dispose()
  }, 200)
  const vmCreate = await medianMicros(async () => vm.createContext({}), 200)
  const quickCreate = await medianMicros(async () => runtime.newContext().dispose(), 200)
  report('new session (isolate + prelude)', create, vmCreate, 'node:vm context')
  report('the same', create, quickCreate, 'quickjs-emscripten context')

  // One fs.readFile capability call.
  const readCall = await medianMicros(() => evaluate('await fs.readFile("a.txt")'), ITERATIONS)
  const vmRead = await medianMicros(
    () => vm.runInContext('readFile("a.txt")', context) as Promise<string>,
    ITERATIONS,
  )
  const quickRead = await medianMicros(async () => quickEval('readFile("a.txt")'), ITERATIONS)
  report('eval with one fs.readFile (js_eval)', readCall, vmRead, 'node:vm + host fn')
  report('the same', readCall, quickRead, 'quickjs + host fn')
  process.stdout.write(
    `  capability call overhead (eval with fs.readFile − eval of 1+1, both via js_eval): ${micros(readCall - toolEval)}\n`,
  )

  // tools.call('read_file') from inside against the same call made directly.
  const inside = await medianMicros(
    () => evaluate('(await tools.call("read_file", { path: "a.txt" })).content.length'),
    ITERATIONS,
  )
  const direct = await medianMicros(() => workshop.call('read_file', { path: 'a.txt' }), ITERATIONS)
  report("tools.call('read_file') inside js_eval", inside, direct, 'read_file called directly')
  process.stdout.write(`  added by the sandbox: ${micros(inside - direct)}\n`)

  // Resident memory an idle session adds.
  await using crowd = new IsolateEngine()
  const warm = await crowd.createSession({ memoryLimitMb: 128, namespaces: { fs: ['readFile'] } })
  await warm.eval('1', { timeoutMs: 10_000 })
  const before = (await crowd.stats()).rss
  const sessions = []
  for (let index = 0; index < SESSIONS; index++) {
    const opened = await crowd.createSession({
      memoryLimitMb: 128,
      namespaces: { fs: ['readFile'] },
    })
    await opened.eval('const x = 1', { timeoutMs: 10_000 })
    sessions.push(opened)
  }
  await new Promise((resolve) => setTimeout(resolve, 500))
  const after = (await crowd.stats()).rss
  const perSession = (after - before) / SESSIONS
  // node:vm contexts live in this process's V8 heap; QuickJS contexts in its WebAssembly heap.
  const heapUsed = () => {
    globalThis.gc?.()
    return process.memoryUsage().heapUsed
  }
  const vmBefore = heapUsed()
  const contexts = Array.from({ length: SESSIONS }, () => {
    const created = vm.createContext({})
    vm.runInContext('const x = 1', created)
    return created
  })
  const vmPer = (heapUsed() - vmBefore) / SESSIONS
  const quickUsed = () => {
    const handle = runtime.computeMemoryUsage()
    const usage = quick.dump(handle) as { memory_used_size: number }
    handle.dispose()
    return usage.memory_used_size
  }
  const quickBefore = quickUsed()
  const quickContexts = Array.from({ length: SESSIONS }, () => {
    const created = runtime.newContext()
    created.unwrapResult(created.evalCode('const x = 1')).dispose()
    return created
  })
  const quickPer = (quickUsed() - quickBefore) / SESSIONS
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`
  process.stdout.write(
    `idle session, resident (${SESSIONS} open)          ${mib(perSession).padStart(10)}   vs node:vm context ${mib(vmPer)} (V8 heap), quickjs context ${mib(quickPer)} (its heap)\n`,
  )
  for (const opened of sessions) await opened.dispose()
  for (const quickContext of quickContexts) quickContext.dispose()
  void contexts
  quick.dispose()
  runtime.dispose()
} finally {
  await fs.rm(scratch, { recursive: true, force: true })
}
