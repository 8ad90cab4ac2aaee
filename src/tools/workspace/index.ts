/**
 * @module tools/workspace
 * The workspace tools: forks, snapshots of main, and the room operations.
 */
import type { Tool } from '../../tool/define-tool.ts'
import { roomFilesTool, roomReadTool, roomWriteTool } from './room-tools.ts'
import { workspaceRestoreTool, workspaceSnapshotsTool } from './snapshot-tools.ts'
import {
  workspaceDiffTool,
  workspaceDiscardTool,
  workspaceForkTool,
  workspaceListTool,
  workspaceLogTool,
  workspaceMergeTool,
  workspaceReviewTool,
  workspaceUseTool,
} from './workspace-tools.ts'

/** The workspace tools, in the order they are offered. */
export const workspaceTools: readonly Tool[] = [
  workspaceForkTool,
  workspaceListTool,
  workspaceUseTool,
  workspaceDiffTool,
  workspaceReviewTool,
  workspaceMergeTool,
  workspaceDiscardTool,
  workspaceLogTool,
  workspaceSnapshotsTool,
  workspaceRestoreTool,
  roomFilesTool,
  roomReadTool,
  roomWriteTool,
]
