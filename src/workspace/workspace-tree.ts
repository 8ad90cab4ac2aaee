/**
 * @module workspace/workspace-tree
 * A line's files as the path policy and the workspace view operate on them: a real folder
 * (main) or a fork's tree kept in the history. Paths are relative, already resolved by the
 * policy, `/`-separated; `''` is the root.
 */
import type { ContentSource, EntryStat, EntryType, ReadBounds } from '../ports/workspace-view.ts'

/** A folder entry as `list` reports it. */
export interface DirectoryEntry {
  readonly name: string
  readonly type: EntryType
}

/** The raw operations a line offers. */
export interface WorkspaceTree {
  /** The host folder behind the tree, when it is a real folder; a fork has none. */
  readonly root: string | undefined
  kind(relativePath: string): Promise<'symlink' | 'directory' | 'other' | undefined>
  readlink(relativePath: string): Promise<string>
  stat(relativePath: string): Promise<EntryStat | undefined>
  /** The file, or the part `bounds` allows; `file_too_large` past `maxBytes`. */
  readFile(relativePath: string, bounds?: ReadBounds): Promise<Uint8Array>
  list(relativePath: string): Promise<DirectoryEntry[]>
  writeFileAtomic(
    relativePath: string,
    data: Uint8Array | ContentSource,
    options?: { mode?: number | undefined },
  ): Promise<{ created: boolean }>
  makeFolder(relativePath: string): Promise<void>
  remove(relativePath: string): Promise<void>
  createSymlink(relativePath: string, target: string): Promise<void>
  /**
   * A cheap identity of what is at a path (a content id) when the tree keeps one; a mirror
   * compares it to know what changed. Undefined: compare size and time instead.
   */
  signature?(relativePath: string): Promise<string | undefined>
  /**
   * When what is at a path was last written, without reading it, when the tree knows it
   * cheaply (a fork's tree keeps its writes' times). Undefined: `stat` it.
   */
  modifiedMs?(relativePath: string): Promise<number | undefined>
}
