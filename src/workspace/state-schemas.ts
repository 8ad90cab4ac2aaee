/**
 * @module workspace/state-schemas
 * The pieces the workspace's state files are checked with when read back. A path in a state
 * file is later joined to a host folder (the user's files, the drive's copy), so a path that
 * could climb out of it (`..`, absolute, empty parts, NUL) is refused here, at the read.
 */
import { z } from 'zod'

/** Longest path a state file may name, in characters. */
export const MAX_STATE_PATH_CHARS = 4096

/** A relative, `/`-separated path with no empty, `.` or `..` parts. */
export const relativePathSchema = z
  .string()
  .min(1)
  .max(MAX_STATE_PATH_CHARS)
  .refine(
    (value) =>
      !value.includes('\0') &&
      value.split('/').every((part) => part !== '' && part !== '.' && part !== '..'),
    'a relative path without empty, "." or ".." parts',
  )

/** A git object id (sha1). */
export const objectIdSchema = z.string().regex(/^[0-9a-f]{40}$/, 'a git object id')

/** A timestamp as `toISOString` writes it. */
export const timestampSchema = z.iso.datetime()
