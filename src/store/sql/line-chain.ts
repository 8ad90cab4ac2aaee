/**
 * @module store/sql/line-chain
 * How a line sees rows: its own, then its parent's up to the fork, then the grandparent's up
 * to the parent's fork, and so on. Sequence numbers grow store-wide, so among the versions a
 * line may see of one row, the one with the highest sequence is the nearest line's latest:
 * "visible" is "eligible, with no newer eligible version of the same key".
 */
import { EitriError } from '../../errors/eitri-error.ts'
import type { LineRecord } from '../line-record.ts'
import type { SqlTransaction, SqlValue } from './sql-driver.ts'
import { lineFromRow, type LineRow } from './line-rows.ts'
import { MAIN_LINE } from '../../ports/line-control.ts'

/** A line and its ancestors, each with the highest sequence the line may see of it. */
export interface LineChain {
  readonly line: LineRecord
  readonly links: readonly { readonly line: string; readonly maxSequence: number }[]
}

const UNBOUNDED = Number.MAX_SAFE_INTEGER

/**
 * Reads the chain of an open line. For writes, `lock` holds the line's row until commit, so
 * writes on one line, its forks and its merges happen one at a time.
 *
 * @throws EitriError `not_found` for an unknown line, `conflict` for a closed one.
 */
export async function readLineChain(
  transaction: SqlTransaction,
  name: string,
  options: { readonly lock?: boolean } = {},
): Promise<LineChain> {
  const lock = options.lock === true && transaction.dialect === 'postgres' ? ' FOR UPDATE' : ''
  const own = await transaction.get<LineRow>(`SELECT * FROM lines WHERE name = ?${lock}`, [name])
  if (own === undefined) {
    throw new EitriError(
      'not_found',
      `No workspace line named ${JSON.stringify(name)} in the store; use main or fork a line first.`,
    )
  }
  const line = lineFromRow(own)
  assertOpen(line)
  const links: { line: string; maxSequence: number }[] = [
    { line: line.name, maxSequence: UNBOUNDED },
  ]
  let child = line
  while (child.parent !== null) {
    const parentRow = await transaction.get<LineRow>('SELECT * FROM lines WHERE name = ?', [
      child.parent,
    ])
    if (parentRow === undefined) break
    links.push({ line: parentRow.name as string, maxSequence: child.forkSequence })
    child = lineFromRow(parentRow)
  }
  return { line, links }
}

/** Throws `conflict` unless the line is open. */
export function assertOpen(line: LineRecord): void {
  if (line.state === 'open') return
  const where = line.state === 'merged' ? `merged into ${line.parent ?? 'its parent'}` : 'discarded'
  throw new EitriError(
    'conflict',
    `Workspace line ${line.name} was ${where}; its rows can no longer be read or written there. Work on ${line.state === 'merged' ? (line.parent ?? MAIN_LINE) : 'another line'} instead.`,
  )
}

/** SQL true for a version (`alias`) the chain may see, with its parameters. */
export function eligible(alias: string, chain: LineChain): { sql: string; parameters: SqlValue[] } {
  const parameters: SqlValue[] = []
  const parts = chain.links.map((link) => {
    parameters.push(link.line, link.maxSequence)
    return `(${alias}.line = ? AND ${alias}.sequence <= ?)`
  })
  return { sql: `(${parts.join(' OR ')})`, parameters }
}

/**
 * SQL true for the version `alias` of table `table` that the chain sees for its key column
 * `key`: eligible, and no eligible version of the same key is newer.
 */
export function visible(
  table: string,
  alias: string,
  key: string,
  chain: LineChain,
): { sql: string; parameters: SqlValue[] } {
  const own = eligible(alias, chain)
  const newer = eligible('newer', chain)
  return {
    sql: `${own.sql} AND NOT EXISTS (SELECT 1 FROM ${table} newer WHERE newer.${key} = ${alias}.${key} AND newer.sequence > ${alias}.sequence AND ${newer.sql})`,
    parameters: [...own.parameters, ...newer.parameters],
  }
}

/**
 * SQL for the rows the chain sees of `table`, one per key: each key's newest eligible
 * version, picked by a window over the eligible versions (`where` narrows them first, such as
 * to some keys). Outer filters go on the `latest` alias. Cheaper than an anti-join when a key
 * has many versions, and the same plan shape on both backends.
 */
export function latestVersions(
  table: string,
  key: string,
  chain: LineChain,
  where: { readonly sql: string; readonly parameters: readonly SqlValue[] } = {
    sql: '1 = 1',
    parameters: [],
  },
): { sql: string; parameters: SqlValue[] } {
  const own = eligible('v', chain)
  return {
    sql: `(SELECT v.*, ROW_NUMBER() OVER (PARTITION BY v.${key} ORDER BY v.sequence DESC) AS version_rank
      FROM ${table} v WHERE ${own.sql} AND ${where.sql}) latest`,
    parameters: [...own.parameters, ...where.parameters],
  }
}

/** SQL for the one version of `keyValue` the chain sees, newest eligible first. */
export function latestVersion(
  table: string,
  key: string,
  chain: LineChain,
): { sql: string; parameters: SqlValue[] } {
  const own = eligible('v', chain)
  return {
    sql: `SELECT v.* FROM ${table} v WHERE v.${key} = ? AND ${own.sql} ORDER BY v.sequence DESC LIMIT 1`,
    parameters: own.parameters,
  }
}
