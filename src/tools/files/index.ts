/**
 * @module tools/files
 * The workspace-confined file tools.
 */
import type { Tool } from '../../tool/define-tool.ts'
import { editFileTool } from './edit-file.ts'
import { globTool } from './glob.ts'
import { grepTool } from './grep.ts'
import { readFileTool } from './read-file.ts'
import { writeFileTool } from './write-file.ts'

/** The file tools, in the order they are offered. */
export const fileTools: readonly Tool[] = [
  readFileTool,
  writeFileTool,
  editFileTool,
  globTool,
  grepTool,
]

export { editFileTool, globTool, grepTool, readFileTool, writeFileTool }
