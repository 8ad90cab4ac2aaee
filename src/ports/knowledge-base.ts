/**
 * @module tool/knowledge-base
 * The knowledge of one workspace line: entries upserted by title, `[[Entity]]` links between
 * them, ranked full-text search. The store implements it.
 */

/** One entry as stored. */
export interface KnowledgeEntry {
  readonly title: string
  readonly body: string
  /** Titles this entry mentions as `[[Title]]`, in order of first mention. */
  readonly links: readonly string[]
  readonly createdAt: string
  readonly updatedAt: string
}

/** What adding one entry did. */
export interface KnowledgeWrite {
  readonly entry: KnowledgeEntry
  /** False when an entry of that title existed and was replaced. */
  readonly created: boolean
}

/** One search result, best first. */
export interface KnowledgeHit {
  readonly title: string
  /** A short extract around the matched words, with matches between `«` and `»`. */
  readonly snippet: string
  /** Higher is better; comparable only within one search and one backend. */
  readonly score: number
}

/** The links of one title: out (its own `[[mentions]]`) and back (entries that mention it). */
export interface KnowledgeLinks {
  readonly title: string
  /** Whether an entry of this title exists (a title can be mentioned before it is written). */
  readonly exists: boolean
  readonly out: readonly { readonly title: string; readonly exists: boolean }[]
  readonly back: readonly string[]
}

/** Options every knowledge operation accepts. */
export interface KnowledgeCallOptions {
  readonly signal?: AbortSignal
}

/**
 * The knowledge of one line. Titles match case-insensitively, with runs of spaces as one.
 *
 * @example
 * await ctx.knowledge.add({ title: 'Store', body: 'Kept in [[SQLite]] or [[PostgreSQL]].' })
 * const hits = await ctx.knowledge.search('sqlite', { limit: 5 })
 */
export interface KnowledgeBase {
  readonly line: string
  /** Adds an entry, or replaces the one of the same title. @throws `invalid_input` */
  add(
    entry: { readonly title: string; readonly body: string },
    options?: KnowledgeCallOptions,
  ): Promise<KnowledgeWrite>
  /** Adds several entries in one transaction: all of them or none. */
  addMany(
    entries: readonly { readonly title: string; readonly body: string }[],
    options?: KnowledgeCallOptions,
  ): Promise<KnowledgeWrite[]>
  /** The entry of that title, or undefined. */
  get(title: string, options?: KnowledgeCallOptions): Promise<KnowledgeEntry | undefined>
  /** Ranked full-text search over titles and bodies. @default limit 10 */
  search(
    query: string,
    options?: KnowledgeCallOptions & { readonly limit?: number | undefined },
  ): Promise<KnowledgeHit[]>
  /** Links out of and back to a title. */
  links(title: string, options?: KnowledgeCallOptions): Promise<KnowledgeLinks>
}
