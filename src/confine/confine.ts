/**
 * @module confine/confine
 * `confine` turns a function, a module's export or a tool into an ordinary tool whose every
 * call runs in an executor, in a fresh scratch folder, within a deadline and a byte budget, and
 * answers with what went in and came out (sha256 of the files) and what it wrote where it may
 * not.
 */
import { EitriError } from '../errors/eitri-error.ts'
import { defineTool, type Tool, type ToolParameters } from '../tool/define-tool.ts'
import type { ToolContext } from '../tool/tool-context.ts'
import type { ToolGovernance } from '../tool/tool-governance.ts'
import type { ToolResult } from '../tool/tool-result.ts'
import { isModuleExport, type ConfinedFunction, type ModuleExport } from './confined-function.ts'
import { confineSettings, type ConfineOptions, type ConfineSettings } from './confine-options.ts'
import {
  callTarget,
  functionSource,
  markSource,
  moduleSource,
  sourceOf,
  type ConfinedSource,
} from './confined-source.ts'
import type { ExecutorCall, ExecutorReport } from './executors/executor.ts'
import { CLOSURE_REFUSAL } from './module-target.ts'
import { sandboxAnswer } from './sandbox-answer.ts'
import { createScratchFolder, removeScratchFolder } from './scratch-folder.ts'
import { hashInputFiles } from './hash-files.ts'

/** What a confined function or module export needs to become a tool. */
export interface ConfinedToolIdentity<Parameters extends ToolParameters> {
  readonly name: string
  readonly description: string
  readonly parameters: Parameters
}

/** Options for re-confining a tool. */
export interface ConfineToolOptions extends ConfineOptions {
  /**
   * Where a child process can load this tool (or a function doing the same): needed to run an
   * ordinary tool out of process. A tool `confine` made remembers its own.
   */
  readonly source?: ModuleExport
}

/**
 * Confines a tool: re-confining keeps its name, description and schema; the new options
 * replace (never nest inside) any sandbox it had.
 */
export function confine<Parameters extends ToolParameters>(
  tool: Tool<Parameters>,
  options?: ConfineToolOptions,
): Tool<Parameters>
/** Confines a function or a module's export as a new tool. */
export function confine<Parameters extends ToolParameters>(
  target: ConfinedFunction | ModuleExport,
  options: ConfineOptions & ConfinedToolIdentity<Parameters>,
): Tool<Parameters>
/**
 * Makes a confined tool. Every call gets a fresh scratch folder (removed afterwards, whatever
 * happened); input strings naming existing files are hashed; the executor runs the function
 * and reports what it wrote; writes outside the permitted paths answer `sandbox_violation`; a
 * timeout answers `timeout` and a failure `tool_failed`, never a throw. Every result carries
 * `metadata.sandbox`, and the tool its `governance`.
 *
 * @throws EitriError `invalid_definition` for a wrong option, `container` mode without an
 *   executor, or a closure with an out-of-process executor (the default).
 * @example
 * const wordCount = confine(
 *   { module: import.meta.resolve('./word-count.ts'), export: 'wordCount' },
 *   {
 *     name: 'word_count',
 *     description: 'Counts the words of a text.',
 *     parameters: z.object({ text: z.string() }),
 *     timeoutMs: 5_000,
 *   },
 * )
 */
export function confine(
  target: Tool | ConfinedFunction | ModuleExport,
  options: ConfineToolOptions & Partial<ConfinedToolIdentity<ToolParameters>> = {},
): Tool {
  const identity = isTool(target) ? target : options
  const name = typeof identity.name === 'string' ? identity.name : 'unnamed'
  const source = confinedSource(target, options, name)
  const settings = confineSettings(name, options)
  if (settings.executor.outOfProcess && source.type !== 'module') {
    throw new EitriError('invalid_definition', `confine('${name}'): ${CLOSURE_REFUSAL}.`)
  }
  const execute = markSource(
    (input: unknown, ctx: ToolContext) => runConfined(name, source, settings, input, ctx),
    source,
  )
  return defineTool({
    name: identity.name as string,
    description: identity.description as string,
    parameters: identity.parameters as ToolParameters,
    execute,
    governance: governanceOf(settings),
  })
}

function confinedSource(
  target: Tool | ConfinedFunction | ModuleExport,
  options: ConfineToolOptions,
  name: string,
): ConfinedSource {
  if (options.source !== undefined) return moduleSource(options.source, name)
  if (typeof target === 'function') return functionSource(target)
  if (isTool(target)) return sourceOf(target) ?? { type: 'tool', tool: target }
  if (isModuleExport(target)) return moduleSource(target, name)
  throw new EitriError(
    'invalid_definition',
    `confine('${name}'): the target must be a tool, a function, or { module, export }.`,
  )
}

async function runConfined(
  name: string,
  source: ConfinedSource,
  settings: ConfineSettings,
  input: unknown,
  ctx: ToolContext,
): Promise<ToolResult> {
  const started = performance.now()
  const inputHashes = await hashInputFiles(input, { signal: ctx.signal })
  const workdir = await createScratchFolder(settings.temporaryRoot)
  try {
    const report = await runExecutor(
      settings,
      {
        target: callTarget(source, ctx),
        input,
        workdir,
        timeoutMs: settings.timeoutMs,
        maxOutputBytes: settings.maxBytes,
        inheritedEnvironment: settings.inheritedEnvironment?.(),
      },
      ctx.signal,
    )
    return sandboxAnswer({
      name,
      settings,
      report,
      workdir,
      inputHashes,
      durationMs: performance.now() - started,
      ctx,
    })
  } finally {
    await removeScratchFolder(workdir)
  }
}

/** The executor's report; a throw becomes an error report that keeps an `EitriError`'s code. */
async function runExecutor(
  settings: ConfineSettings,
  call: ExecutorCall,
  signal: AbortSignal,
): Promise<ExecutorReport & { code?: EitriError['code'] }> {
  try {
    return await settings.executor.run(call, { signal })
  } catch (error) {
    return {
      stdout: '',
      result: undefined,
      files: {},
      status: 'error',
      error: error instanceof Error ? error.message : String(error),
      ...(EitriError.isInstance(error) ? { code: error.code } : {}),
    }
  }
}

function governanceOf(settings: ConfineSettings): ToolGovernance {
  return {
    sideEffects: settings.mode === 'read-only' ? 'read' : 'write',
    timeoutMs: settings.timeoutMs,
    maxBytes: settings.maxBytes,
    sandbox: { mode: settings.mode, allowPaths: settings.allowPaths },
  }
}

function isTool(value: unknown): value is Tool {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<Tool>).execute === 'function' &&
    typeof (value as Partial<Tool>).name === 'string'
  )
}
