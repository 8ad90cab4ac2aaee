/**
 * @module tool/workspace-view
 * What a tool may do with the workspace it is bound to. The access layer implements it, so
 * every operation has already passed the path policy; tools never touch host paths.
 */
import { EitriError } from '../errors/eitri-error.ts'

/** The kind of an entry in the workspace. */
export type EntryType = 'file' | 'directory' | 'symlink' | 'other'

/** What `stat` tells about an entry. */
export interface EntryStat {
  readonly type: EntryType
  readonly size: number
  readonly mode: number
  readonly modifiedMs: number
}

/** One entry met by `walk`; `path` is workspace-relative with `/` separators. */
export interface WalkEntry {
  readonly path: string
  readonly type: EntryType
}

/** What a write did. */
export interface WriteReceipt {
  /** The workspace-relative path written. */
  readonly path: string
  readonly bytes: number
  readonly created: boolean
}

/**
 * A file's content read in pieces, for content too large to hold at once (what a jailed
 * program wrote). Reading past the end answers 0.
 */
export interface ContentSource {
  /** The content's length in bytes (a sparse file's apparent size). */
  readonly size: number
  /** Reads up to `buffer.byteLength` bytes at `position` into `buffer`; answers how many. */
  read(buffer: Uint8Array, position: number): number
}

/** What a file write takes: text (UTF-8), bytes, or content read in pieces. */
export type FileContent = string | Uint8Array | ContentSource

/** Options every workspace operation accepts. */
export interface WorkspaceCallOptions {
  readonly signal?: AbortSignal
}

/**
 * How much of a file one read may bring into memory: a byte range, or the whole file only if it
 * holds at most `maxBytes` (a file that grew past it since its size was taken is refused too).
 */
export interface ReadBounds {
  /** Bytes from `offset`, at most `length` (fewer at the end of the file). */
  readonly range?: { readonly offset: number; readonly length: number } | undefined
  /** The whole file, refused with `file_too_large` when it holds more. */
  readonly maxBytes?: number | undefined
}

/** Options of `readFile`. */
export interface ReadOptions extends WorkspaceCallOptions, ReadBounds {}

/** Options of `walk`. */
export interface WalkOptions extends WorkspaceCallOptions {
  /** Entries for which this returns true are neither yielded nor entered. */
  readonly prune?: (entry: WalkEntry) => boolean
  /**
   * Leaves out what the line's `.gitignore` files ignore, as git would (every folder's file,
   * `!` re-including). The starting path is walked even when it is ignored itself.
   */
  readonly gitignore?: boolean
}

/**
 * A workspace line as tools see it: paths are workspace-relative (absolute paths are accepted
 * only when they point inside it), every call is checked by the one path policy, and every
 * refusal is an `EitriError` whose message a model can act on.
 */
export interface WorkspaceView {
  /** The line this view is bound to: `main`, or later a fork. */
  readonly line: string
  /**
   * Resolves `path` for `intent` and returns its canonical workspace-relative form
   * (`''` for the root). Throws `path_outside_workspace`, `protected_path` or `invalid_input`.
   * With `followFinal: false` a final link is judged as itself (to remove or replace it).
   */
  resolve(
    path: string,
    intent: 'read' | 'write',
    options?: { readonly followFinal?: boolean },
  ): Promise<string>
  /**
   * Reads a file, or the part `options` bounds it to. Throws `not_found`, `is_directory` or
   * `file_too_large` (over `maxBytes`) besides the policy's codes.
   */
  readFile(path: string, options?: ReadOptions): Promise<Uint8Array>
  /**
   * Writes a file atomically, creating folders; an existing file keeps its mode unless
   * `mode` is given (only its permission bits are kept: never setuid, setgid or sticky).
   */
  writeFile(
    path: string,
    data: FileContent,
    options?: WorkspaceCallOptions & { readonly mode?: number | undefined },
  ): Promise<WriteReceipt>
  /**
   * Writes several files as one change, all or nothing: every path is judged (each as though
   * the others were already written) before any is written, and a failure midway puts back what
   * the batch had written. Throws the policy's codes, naming the refused path.
   */
  writeFiles(
    files: readonly { readonly path: string; readonly data: FileContent }[],
    options?: WorkspaceCallOptions,
  ): Promise<WriteReceipt[]>
  /** Creates a folder and its missing parents. */
  makeFolder(path: string, options?: WorkspaceCallOptions): Promise<void>
  /**
   * Removes a file, a symbolic link (never what it points to) or an empty folder. Missing is
   * not an error. Throws the policy's codes for a path that may not be written.
   */
  remove(path: string, options?: WorkspaceCallOptions): Promise<void>
  /**
   * Creates or replaces a symbolic link. Its target, taken relative to the link's folder, must
   * stay inside the workspace (`path_outside_workspace` otherwise).
   */
  createSymlink(path: string, target: string, options?: WorkspaceCallOptions): Promise<void>
  /** Describes an entry without following a final symbolic link; `undefined` when missing. */
  stat(path: string, options?: WorkspaceCallOptions): Promise<EntryStat | undefined>
  /**
   * Lists every entry under a folder, depth first in name order, never following symbolic
   * links and never entering `.git` or eitri's own state.
   */
  walk(path: string, options?: WalkOptions): AsyncIterable<WalkEntry>
  /** Replaces the workspace's host location in `text`, so no output reveals it. */
  redact(text: string): string
  /**
   * The same view, with approval requests and their records naming `tool` as the caller. Views
   * that never ask a person need not have it.
   */
  forTool?(tool: string): WorkspaceView
}

/**
 * A view that reaches no workspace: every file operation throws `not_available` with `reason`
 * (for a tool run apart from the workspace, or a test context).
 */
export function workspaceRefused(
  line: string,
  reason: string,
  redact: (text: string) => string = (text) => text,
  code: 'not_available' | 'not_found' = 'not_available',
): WorkspaceView {
  const refuse = (): never => {
    throw new EitriError(code, reason)
  }
  return {
    line,
    resolve: refuse,
    readFile: refuse,
    writeFile: refuse,
    writeFiles: refuse,
    makeFolder: refuse,
    remove: refuse,
    createSymlink: refuse,
    stat: refuse,
    walk: refuse,
    redact,
  }
}
