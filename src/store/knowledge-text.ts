/**
 * @module store/knowledge-text
 * How knowledge text is read: titles as keys, `[[Entity]]` mentions, and search words.
 */

/** Longest title kept, in characters. */
export const MAX_TITLE_CHARS = 300
/** Most words a search uses; the rest are ignored. */
const MAX_QUERY_TERMS = 32

/** A title as typed, tidied: trimmed, with each run of white space one space. */
export function tidyTitle(title: string): string {
  return title.normalize('NFC').trim().replace(/\s+/gu, ' ')
}

/** The key two titles share when they name the same entry: tidied and lower-cased. */
export function titleKey(title: string): string {
  return tidyTitle(title).toLowerCase()
}

/**
 * The titles a body mentions as `[[Title]]` (or `[[Title|shown text]]`), tidied, each once,
 * in order of first mention.
 *
 * @example
 * mentionedTitles('See [[SQLite]] and [[sqlite|the file]].') // ['SQLite']
 */
export function mentionedTitles(body: string): string[] {
  const titles = new Map<string, string>()
  for (const match of body.matchAll(/\[\[([^[\]\n]{1,300}?)\]\]/gu)) {
    const title = tidyTitle((match[1] as string).split('|')[0] as string)
    if (title !== '' && !titles.has(titleKey(title))) titles.set(titleKey(title), title)
  }
  return [...titles.values()]
}

/**
 * English stop words (the Snowball list PostgreSQL's `english` configuration uses). Both
 * backends drop them from queries, so "the" matches nothing in either rather than everything
 * in SQLite and nothing in PostgreSQL.
 */
const STOP_WORDS = new Set(
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
  she her hers herself it its itself they them their theirs themselves what which who whom this
  that these those am is are was were be been being have has had having do does did doing a an
  the and but if or because as until while of at by for with about against between into through
  during before after above below to from up down in out on off over under again further then
  once here there when where why how all any both each few more most other some such no nor not
  only own same so than too very s t can will just don should now`.split(/\s+/u),
)

/** The words of a search, lower-cased, each once: letters and digits only, no stop words. */
export function queryTerms(query: string): string[] {
  const words =
    query
      .normalize('NFC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  return [...new Set(words)].filter((word) => !STOP_WORDS.has(word)).slice(0, MAX_QUERY_TERMS)
}
