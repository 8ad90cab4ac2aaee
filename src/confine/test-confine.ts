/**
 * @module confine/test-confine
 * Shared pieces of the confine tests: a probe tool's identity, the inline executor, calls
 * through the whole tool contract, and per-test folders.
 */
import type { TestContext } from 'node:test'
import { z } from 'zod'
import type { Tool } from '../tool/define-tool.ts'
import { runToolCall } from '../tool/run-tool-call.ts'
import { contextWith } from '../tool/test-context.ts'
import type { ToolResult } from '../tool/tool-result.ts'
import { inlineExecutor } from './executors/inline-executor.ts'
import type { SandboxMetadata } from './sandbox-answer.ts'
import { createScratchFolder, removeScratchFolder } from './scratch-folder.ts'

/** The name, description and schema of the probe tool. */
export const identity = {
  name: 'probe',
  description: 'A test tool.',
  parameters: z.object({ text: z.string().optional(), path: z.string().optional() }),
}

/** The fake executor. */
export const inline = inlineExecutor()

/** A result's `metadata.sandbox`. */
export function sandboxOf(result: ToolResult): SandboxMetadata {
  return result.metadata['sandbox'] as SandboxMetadata
}

/** A fresh folder, removed after the test. */
export async function folder(t: TestContext): Promise<string> {
  const created = await createScratchFolder()
  t.after(() => removeScratchFolder(created))
  return created
}

/** Calls a tool through the whole contract (validation, cancellation, truncation). */
export function call(tool: Tool, input: unknown = {}, signal?: AbortSignal): Promise<ToolResult> {
  return runToolCall(tool, input, contextWith(signal))
}
