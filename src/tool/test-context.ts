/**
 * @module tool/test-context
 * A tool context for contract tests that never touch a workspace: any file operation fails.
 */
import type { ToolContext } from './tool-context.ts'
import { workspaceRefused, type WorkspaceView } from '../ports/workspace-view.ts'

/** A workspace view that refuses everything; `redact` replaces `/host/secret/root`. */
export const noWorkspace: WorkspaceView = workspaceRefused(
  'none',
  'This test context has no workspace.',
  (text) => text.replaceAll('/host/secret/root', '/workspace'),
)

/** A context with `signal` and no workspace. */
export function contextWith(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, workspace: noWorkspace }
}
