/**
 * @module tools/knowledge/knowledge-add-tool
 * `knowledge_add`: writes an entry, or replaces the one of the same title.
 */
import { z } from 'zod'
import { defineTool } from '../../tool/define-tool.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { knowledgeBaseOf } from './knowledge-base-of.ts'

/** Upserts one entry by title. */
export const knowledgeAddTool = defineTool({
  name: 'knowledge_add',
  description:
    'Save what you learned in the knowledge base of this workspace, as an entry about one entity (a module, a person, a decision). An entry with the same title (ignoring case) is replaced. Mention other entities as [[Title]] to link them; knowledge_links follows the links.',
  parameters: z.object({
    title: z.string().trim().min(1).max(300).describe('The entity the entry is about.'),
    body: z.string().describe('What is known about it; [[Other Title]] links to another entry.'),
  }),
  async execute({ title, body }, ctx) {
    const { entry, created } = await knowledgeBaseOf(ctx).add(
      { title, body },
      { signal: ctx.signal },
    )
    const links = entry.links.length === 0 ? '' : ` Links to: ${entry.links.join(', ')}.`
    return toolSuccess(
      `${created ? 'Added' : 'Replaced'} the knowledge entry "${entry.title}".${links}`,
      { title: entry.title, created, links: entry.links },
    )
  },
})
