/**
 * @module tools/knowledge/knowledge-search-tool
 * `knowledge_search`: ranked full-text search with snippets.
 */
import { z } from 'zod'
import { defineTool } from '../../tool/define-tool.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { knowledgeBaseOf } from './knowledge-base-of.ts'

/** Searches titles and bodies, best first. */
export const knowledgeSearchTool = defineTool({
  name: 'knowledge_search',
  description:
    'Search the knowledge base of this workspace by words (any of them; titles count most). Answers the best entries first, each with a snippet where «matches» are marked. Read a whole entry by searching its title, or follow its links with knowledge_links.',
  parameters: z.object({
    query: z.string().trim().min(1).describe('Words to look for.'),
    limit: z.int().min(1).max(100).optional().describe('Most entries to answer. Default 10.'),
  }),
  async execute({ query, limit }, ctx) {
    const hits = await knowledgeBaseOf(ctx).search(query, { limit, signal: ctx.signal })
    if (hits.length === 0) {
      return toolSuccess(`No knowledge entries match "${query}".`, { count: 0, results: [] })
    }
    const content = hits
      .map((hit, index) => `${index + 1}. ${hit.title}\n   ${hit.snippet.replace(/\s+/g, ' ')}`)
      .join('\n')
    return toolSuccess(content, { count: hits.length, results: hits })
  },
})
