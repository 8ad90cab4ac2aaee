/**
 * @module store/sql/json-column
 * JSON-compatible values in TEXT columns (the same in both backends).
 */
import type { SqlValue } from './sql-driver.ts'

/** `value` as column text; undefined becomes NULL. */
export function toJsonColumn(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value)
}

/** A column's value back; NULL becomes null. */
export function fromJsonColumn(value: SqlValue | undefined): unknown {
  return value === null || value === undefined ? null : (JSON.parse(String(value)) as unknown)
}
