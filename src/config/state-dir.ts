/**
 * @module config/state-dir
 * Where eitri keeps the state of one workspace: a folder per workspace under the state folder,
 * keyed by the workspace's real path.
 */
import { createHash } from 'node:crypto'
import path from 'node:path'

/** The state folder of the workspace whose real path is `workspaceRoot`. */
export function workspaceStateDir(stateDir: string, workspaceRoot: string): string {
  const digest = createHash('sha256').update(workspaceRoot).digest('hex').slice(0, 16)
  const name = path.basename(workspaceRoot).replace(/[^A-Za-z0-9._-]/g, '_') || 'root'
  return path.join(stateDir, 'workspaces', `${name}-${digest}`)
}
