/**
 * @module workspace/fork-registry
 * The forks of a workspace on disk: one folder each in the state folder, holding its record
 * (`fork.json`) and its write log, and one reference each in the history.
 */
import fs from 'node:fs'
import path from 'node:path'
import { writeDurably } from './merge-journal.ts'

/** A fork as listed. */
export interface ForkInfo {
  readonly id: string
  readonly name?: string
  /** The line it was forked from and merges into. */
  readonly parent: string
  /** The commit it was forked at (the base of its merges). */
  readonly forkPoint: string
  readonly created: string
  readonly readOnly: boolean
  readonly quotaBytes: number
  /** Set once merged: a merged fork is read-only; fork again to go on. */
  readonly merged?: { readonly into: string; readonly at: string }
}

/** The reference of a fork's line. */
export function forkRef(id: string): string {
  return `refs/eitri/forks/${id}`
}

/** The folder of a fork's record and write log. */
export function forkFolder(stateDir: string, id: string): string {
  return path.join(stateDir, 'forks', id)
}

/** Every fork recorded, oldest first; a record that cannot be read is skipped. */
export function readForks(stateDir: string): ForkInfo[] {
  const folder = path.join(stateDir, 'forks')
  return fs
    .readdirSync(folder)
    .flatMap((id) => {
      try {
        return [JSON.parse(fs.readFileSync(path.join(folder, id, 'fork.json'), 'utf8')) as ForkInfo]
      } catch {
        return []
      }
    })
    .sort((a, b) => a.created.localeCompare(b.created))
}

/** Writes a fork's record durably. */
export function writeFork(stateDir: string, info: ForkInfo): void {
  writeDurably(path.join(forkFolder(stateDir, info.id), 'fork.json'), info)
}
