/**
 * @module tools/knowledge
 * The knowledge tools: a durable, linked, searchable knowledge base per workspace line.
 */
import type { Tool } from '../../tool/define-tool.ts'
import { knowledgeAddTool } from './knowledge-add-tool.ts'
import { knowledgeLinksTool } from './knowledge-links-tool.ts'
import { knowledgeSearchTool } from './knowledge-search-tool.ts'

/** The knowledge tools, in the order they are offered. */
export const knowledgeTools: readonly Tool[] = [
  knowledgeAddTool,
  knowledgeSearchTool,
  knowledgeLinksTool,
]

export { knowledgeAddTool, knowledgeLinksTool, knowledgeSearchTool }
