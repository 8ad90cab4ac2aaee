/**
 * @module tools/files/file-path
 * The path of one file, as the file tools take it (read_file, write_file, edit_file, room_read,
 * room_write): workspace-relative, and never ending in `/`, which names a folder. Without the
 * check, `a/` was written as the file `a`, as if the model had meant it.
 */
import { z } from 'zod'

/** A file's path; its description says what the tool does with it. */
export function filePath(description: string) {
  return z
    .string()
    .min(1)
    .refine((path) => !path.endsWith('/'), {
      error: (issue) =>
        `${JSON.stringify(issue.input)} ends in "/", which names a folder, not a file: give the file's path without the trailing "/" (such as src/a.ts)`,
    })
    .describe(description)
}
