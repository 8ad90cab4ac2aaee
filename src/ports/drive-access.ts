/**
 * @module tool/drive-access
 * The blob drive as tools and the code sandbox see it: content-addressed files (the same bytes
 * give the same sha256 id), in folders, where writing an existing name keeps the old version.
 */

/** A file of the drive, or one of its versions. */
export interface DriveFile {
  readonly path: string
  /** `sha256:` and the hex digest of the content. */
  readonly id: string
  readonly size: number
  readonly when: string
}

/** An entry of a folder listing: folders first, then files. */
export type DriveEntry =
  | { readonly type: 'folder'; readonly name: string }
  | ({ readonly type: 'file'; readonly name: string } & DriveFile)

/** The drive. Paths are `/`-separated, relative to the drive's root. */
export interface DriveAccess {
  write(path: string, data: Uint8Array): Promise<DriveFile>
  /** The current content of a name, or of one of its versions (by id). */
  read(path: string, options?: { readonly version?: string }): Promise<Uint8Array>
  /** Content by id, whatever name it had. */
  get(id: string): Promise<Uint8Array>
  /** The latest file or version whose content has id `id` (its size, say); undefined if none. */
  find(id: string): Promise<DriveFile | undefined>
  list(folder: string): Promise<DriveEntry[]>
  /** Every version a name had, oldest first. */
  versions(path: string): Promise<DriveFile[]>
  stat(
    path: string,
  ): Promise<DriveFile | { readonly type: 'folder'; readonly path: string } | undefined>
  makeFolder(path: string): Promise<void>
  /** Removes a file (its versions stay reachable by id) or an empty folder. */
  remove(path: string): Promise<void>
}
