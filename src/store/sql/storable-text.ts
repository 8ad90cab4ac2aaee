/**
 * @module store/sql/storable-text
 * Text as both backends can keep it. PostgreSQL's `text` cannot hold U+0000: a statement
 * binding one fails (SQLSTATE 22021) every time, and a terminal write retried until it lands
 * (a Run's output, an echo of its task, a model's answer ending in a NUL) would never land,
 * leaving the Run `running` for good. Each NUL is kept as U+FFFD instead, on SQLite too, so
 * the two backends store the same text. JSON columns are unaffected: JSON escapes it.
 */
import type { SqlValue } from './sql-driver.ts'

const NUL = '\u0000'
const REPLACEMENT = '\uFFFD'

/** `parameters` with every NUL in their strings replaced by U+FFFD (the same array when none has one). */
export function storableParameters(parameters: readonly SqlValue[]): readonly SqlValue[] {
  if (!parameters.some((value) => typeof value === 'string' && value.includes(NUL)))
    return parameters
  return parameters.map((value) =>
    typeof value === 'string' ? value.replaceAll(NUL, REPLACEMENT) : value,
  )
}
