/**
 * @module tool/test-context
 * A tool context for contract tests that never touch a workspace: any file operation fails.
 */
import { EitriError } from '../errors/eitri-error.ts'
import type { ToolContext } from './tool-context.ts'
import type { WorkspaceView } from '../ports/workspace-view.ts'

const refuse = (): never => {
  throw new EitriError('not_available', 'This test context has no workspace.')
}

/** A workspace view that refuses everything; `redact` replaces `/host/secret/root`. */
export const noWorkspace: WorkspaceView = {
  line: 'none',
  resolve: refuse,
  readFile: refuse,
  writeFile: refuse,
  makeFolder: refuse,
  remove: refuse,
  createSymlink: refuse,
  stat: refuse,
  walk: refuse,
  redact: (text) => text.replaceAll('/host/secret/root', '/workspace'),
}

/** A context with `signal` and no workspace. */
export function contextWith(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, workspace: noWorkspace }
}
