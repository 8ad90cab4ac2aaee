/**
 * @module tools/knowledge/knowledge-links-tool
 * `knowledge_links`: the links out of an entry and back to it.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { defineTool } from '../../tool/define-tool.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { knowledgeBaseOf } from './knowledge-base-of.ts'

/** Lists the links of one title. */
export const knowledgeLinksTool = defineTool({
  name: 'knowledge_links',
  description:
    'Show how a knowledge entry connects: the entries it mentions as [[Title]] (links out, with the ones not written yet marked) and the entries that mention it (links back).',
  parameters: z.object({
    title: z.string().trim().min(1).describe('The entry’s title (case does not matter).'),
  }),
  async execute({ title }, ctx) {
    const links = await knowledgeBaseOf(ctx).links(title, { signal: ctx.signal })
    if (!links.exists && links.back.length === 0) {
      throw new EitriError(
        'not_found',
        `No knowledge entry is titled "${links.title}" and none mentions it. knowledge_search finds entries by their words.`,
      )
    }
    const out =
      links.out.length === 0
        ? '(none)'
        : links.out
            .map((link) => (link.exists ? link.title : `${link.title} (not written yet)`))
            .join(', ')
    const back = links.back.length === 0 ? '(none)' : links.back.join(', ')
    const heading = links.exists ? links.title : `${links.title} (no entry yet; only mentioned)`
    return toolSuccess(`${heading}\nLinks out: ${out}\nLinks back: ${back}`, { ...links })
  },
})
