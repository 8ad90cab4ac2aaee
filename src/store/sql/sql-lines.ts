/**
 * @module store/sql/sql-lines
 * Fork, merge and discard of workspace lines. A fork is one row (O(1)); a merge re-writes the
 * child's latest versions onto the parent (O(rows the child changed)); a discard deletes them.
 */
import { EitriError } from '../../errors/eitri-error.ts'
import {
  LINE_NAME_PATTERN,
  MAIN_LINE,
  type LineRecord,
  type MergeConflict,
  type MergeOptions,
  type MergeReport,
} from '../line-record.ts'
import type { StoreDependencies } from '../store-dependencies.ts'
import { insertKnowledgeVersions, type KnowledgeVersion } from './knowledge-rows.ts'
import { assertOpen, readLineChain } from './line-chain.ts'
import { lineFromRow } from './line-rows.ts'
import type { SqlDriver, SqlTransaction } from './sql-driver.ts'
import { insertTaskVersion, prefixed, taskFromRow } from './sql-task-board.ts'

type CallOptions = { readonly signal?: AbortSignal | undefined }

/** Forks `child` from `parent`. */
export async function forkLine(
  driver: SqlDriver,
  dependencies: StoreDependencies,
  parent: string,
  child: string,
  options: CallOptions = {},
): Promise<LineRecord> {
  if (!LINE_NAME_PATTERN.test(child)) {
    throw new EitriError(
      'invalid_input',
      `Line names are 1 to 200 letters, digits and . _ : / - (starting with a letter or digit); got ${JSON.stringify(child)}.`,
    )
  }
  return driver.transaction(
    'write',
    async (transaction) => {
      await readLineChain(transaction, parent, { lock: true })
      if ((await lineRow(transaction, child)) !== undefined) {
        throw new EitriError(
          'conflict',
          `A workspace line named ${child} exists already (lines are never reused); choose another name.`,
        )
      }
      const [sequence] = await transaction.nextSequences(1)
      const record: LineRecord = {
        name: child,
        parent,
        forkSequence: sequence as number,
        state: 'open',
        createdAt: dependencies.now().toISOString(),
        closedAt: null,
      }
      await transaction.run(
        'INSERT INTO lines (name, parent, fork_sequence, state, created_at) VALUES (?, ?, ?, ?, ?)',
        [record.name, parent, record.forkSequence, record.state, record.createdAt],
      )
      return record
    },
    options,
  )
}

/** Merges `child` into its parent. */
export async function mergeLine(
  driver: SqlDriver,
  dependencies: StoreDependencies,
  child: string,
  options: MergeOptions = {},
): Promise<MergeReport> {
  return driver.transaction(
    'write',
    async (transaction) => {
      const line = await requireLine(transaction, child)
      assertOpen(line)
      if (line.parent === null) {
        throw new EitriError('conflict', `${child} has no parent to merge into.`)
      }
      // Lock the parent, then the child; every merge and fork takes them in this order.
      await readLineChain(transaction, line.parent, { lock: true })
      await readLineChain(transaction, child, { lock: true })
      const open = await openChildren(transaction, child)
      if (open.length > 0) {
        throw new EitriError(
          'conflict',
          `${child} has open forks (${open.join(', ')}); merge or discard them before merging ${child}.`,
        )
      }
      const conflicts = await findConflicts(transaction, child, line.parent, line.forkSequence)
      if (conflicts.length > 0 && options.conflicts === 'refuse') {
        throw new EitriError(
          'conflict',
          `${child} and ${line.parent} both changed ${conflicts.map((c) => `${c.kind} ${c.key}`).join(', ')} since the fork; nothing was merged.`,
          { data: { conflicts } },
        )
      }
      const merged =
        (await mergeTasks(transaction, child, line.parent)) +
        (await mergeKnowledge(transaction, child, line.parent))
      await deleteRows(transaction, [child])
      await closeLines(transaction, [child], 'merged', dependencies.now().toISOString())
      return { line: child, into: line.parent, merged, conflicts }
    },
    options,
  )
}

/** Discards `child` and every open line forked below it. */
export async function discardLine(
  driver: SqlDriver,
  dependencies: StoreDependencies,
  child: string,
  options: CallOptions = {},
): Promise<LineRecord[]> {
  return driver.transaction(
    'write',
    async (transaction) => {
      const line = await requireLine(transaction, child)
      assertOpen(line)
      if (line.parent === null) {
        throw new EitriError('conflict', `${MAIN_LINE} cannot be discarded; discard its forks.`)
      }
      await readLineChain(transaction, child, { lock: true })
      const doomed = [child]
      for (let index = 0; index < doomed.length; index++) {
        doomed.push(...(await openChildren(transaction, doomed[index] as string)))
      }
      await deleteRows(transaction, doomed)
      await closeLines(transaction, doomed, 'discarded', dependencies.now().toISOString())
      const closed: LineRecord[] = []
      for (const name of doomed) closed.push(await requireLine(transaction, name))
      return closed
    },
    options,
  )
}

/** One line, or undefined. */
export function getLine(
  driver: SqlDriver,
  name: string,
  options: CallOptions = {},
): Promise<LineRecord | undefined> {
  return driver.transaction('read', async (transaction) => lineRow(transaction, name), options)
}

/** Every line, oldest first. */
export function listLines(driver: SqlDriver, options: CallOptions = {}): Promise<LineRecord[]> {
  return driver.transaction(
    'read',
    async (transaction) =>
      (await transaction.all('SELECT * FROM lines ORDER BY fork_sequence, name')).map(lineFromRow),
    options,
  )
}

async function lineRow(transaction: SqlTransaction, name: string): Promise<LineRecord | undefined> {
  const row = await transaction.get('SELECT * FROM lines WHERE name = ?', [name])
  return row === undefined ? undefined : lineFromRow(row)
}

async function requireLine(transaction: SqlTransaction, name: string): Promise<LineRecord> {
  const line = await lineRow(transaction, name)
  if (line === undefined) {
    throw new EitriError('not_found', `No workspace line named ${JSON.stringify(name)}.`)
  }
  return line
}

async function openChildren(transaction: SqlTransaction, name: string): Promise<string[]> {
  const rows = await transaction.all<{ name: string }>(
    "SELECT name FROM lines WHERE parent = ? AND state = 'open' ORDER BY name",
    [name],
  )
  return rows.map((row) => row.name)
}

async function findConflicts(
  transaction: SqlTransaction,
  child: string,
  parent: string,
  forkSequence: number,
): Promise<MergeConflict[]> {
  const tasks = await transaction.all<{ id: string }>(
    `SELECT DISTINCT c.id AS id FROM task_versions c WHERE c.line = ? AND EXISTS (
      SELECT 1 FROM task_versions p WHERE p.line = ? AND p.id = c.id AND p.sequence > ?)
      ORDER BY c.id`,
    [child, parent, forkSequence],
  )
  const entries = await transaction.all<{ key: string; title: string }>(
    `SELECT c.key AS key, MAX(c.title) AS title FROM knowledge_versions c WHERE c.line = ? AND EXISTS (
      SELECT 1 FROM knowledge_versions p WHERE p.line = ? AND p.key = c.key AND p.sequence > ?)
      GROUP BY c.key ORDER BY c.key`,
    [child, parent, forkSequence],
  )
  return [
    ...tasks.map((row): MergeConflict => ({ kind: 'task', key: row.id })),
    ...entries.map((row): MergeConflict => ({ kind: 'knowledge', key: row.title })),
  ]
}

/** Copies the child's latest version of each task onto the parent, as new versions. */
async function mergeTasks(
  transaction: SqlTransaction,
  child: string,
  parent: string,
): Promise<number> {
  const rows = await transaction.all(
    `SELECT ${prefixed('c')} FROM task_versions c WHERE c.line = ? AND NOT EXISTS (
      SELECT 1 FROM task_versions n WHERE n.line = c.line AND n.id = c.id AND n.sequence > c.sequence)
      ORDER BY c.sequence`,
    [child],
  )
  const sequences = await transaction.nextSequences(rows.length)
  for (const [index, row] of rows.entries()) {
    await insertTaskVersion(transaction, sequences[index] as number, parent, taskFromRow(row))
  }
  return rows.length
}

async function mergeKnowledge(
  transaction: SqlTransaction,
  child: string,
  parent: string,
): Promise<number> {
  const rows = await transaction.all(
    `SELECT c.sequence, c.key, c.title, c.body, c.created_at, c.updated_at FROM knowledge_versions c
      WHERE c.line = ? AND NOT EXISTS (
        SELECT 1 FROM knowledge_versions n WHERE n.line = c.line AND n.key = c.key AND n.sequence > c.sequence)
      ORDER BY c.sequence`,
    [child],
  )
  if (rows.length === 0) return 0
  const sequences = await transaction.nextSequences(rows.length)
  const links = await transaction.all<{ version_sequence: number; target_title: string }>(
    `SELECT l.version_sequence, l.target_title FROM knowledge_links l
      JOIN knowledge_versions c ON c.sequence = l.version_sequence
      WHERE c.line = ? ORDER BY l.version_sequence, l.position`,
    [child],
  )
  const linksBySequence = new Map<number, string[]>()
  for (const link of links) {
    const sequence = Number(link.version_sequence)
    linksBySequence.set(sequence, [...(linksBySequence.get(sequence) ?? []), link.target_title])
  }
  const versions = rows.map((row, index): KnowledgeVersion => ({
    sequence: sequences[index] as number,
    line: parent,
    key: row['key'] as string,
    title: row['title'] as string,
    body: row['body'] as string,
    links: linksBySequence.get(Number(row['sequence'])) ?? [],
    createdAt: row['created_at'] as string,
    updatedAt: row['updated_at'] as string,
  }))
  await insertKnowledgeVersions(transaction, versions)
  return rows.length
}

async function deleteRows(transaction: SqlTransaction, lines: readonly string[]): Promise<void> {
  for (const line of lines) {
    await transaction.run(
      'DELETE FROM knowledge_links WHERE version_sequence IN (SELECT sequence FROM knowledge_versions WHERE line = ?)',
      [line],
    )
    await transaction.run('DELETE FROM knowledge_versions WHERE line = ?', [line])
    await transaction.run('DELETE FROM task_versions WHERE line = ?', [line])
  }
}

async function closeLines(
  transaction: SqlTransaction,
  lines: readonly string[],
  state: 'merged' | 'discarded',
  now: string,
): Promise<void> {
  for (const line of lines) {
    await transaction.run('UPDATE lines SET state = ?, closed_at = ? WHERE name = ?', [
      state,
      now,
      line,
    ])
  }
}
