/**
 * The names an entry file exports, read from its source: entries are explicit export lists
 * (`export { a, type B } from './x.ts'`), so no type checker is needed.
 */
import fs from 'node:fs'
import ts from 'typescript'

/** Entry → its source file, relative to the repository. */
export const ENTRIES: Record<string, string> = {
  eitri: 'src/index.ts',
  'eitri/mcp': 'src/entry/mcp.ts',
  'eitri/store': 'src/entry/store.ts',
  'eitri/eval': 'src/entry/eval.ts',
  'eitri/jail': 'src/entry/jail.ts',
  'eitri/confine': 'src/entry/confine.ts',
  'eitri/testing': 'src/entry/testing.ts',
}

export interface EntryExports {
  /** Names that exist at run time, sorted. */
  readonly values: string[]
  /** Names that are types only, sorted. */
  readonly types: string[]
  /** Statements that are not an explicit export list (`export *`, a local declaration). */
  readonly other: string[]
}

/** Reads the export list of the entry file `file`. */
export function entryExports(file: string): EntryExports {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest)
  const values: string[] = []
  const types: string[] = []
  const other: string[] = []
  for (const statement of source.statements) {
    const clause = ts.isExportDeclaration(statement) ? statement.exportClause : undefined
    if (!clause || !ts.isNamedExports(clause)) {
      other.push(statement.getText(source).slice(0, 80))
      continue
    }
    for (const element of clause.elements) {
      const typeOnly = (statement as ts.ExportDeclaration).isTypeOnly || element.isTypeOnly
      ;(typeOnly ? types : values).push(element.name.text)
    }
  }
  return { values: values.sort(), types: types.sort(), other }
}
