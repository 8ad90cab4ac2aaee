/**
 * @module tools/knowledge/knowledge-base-of
 * The knowledge base a call needs.
 */
import { EitriError } from '../../errors/eitri-error.ts'
import type { KnowledgeBase } from '../../ports/knowledge-base.ts'
import type { ToolContext } from '../../tool/tool-context.ts'

/** The call's knowledge base. @throws EitriError `not_available` when the call has no store. */
export function knowledgeBaseOf(ctx: ToolContext): KnowledgeBase {
  if (ctx.knowledge === undefined) {
    throw new EitriError(
      'not_available',
      'Knowledge needs eitri’s store, and this caller has none; open the workshop with a store (the default) to use it.',
    )
  }
  return ctx.knowledge
}
