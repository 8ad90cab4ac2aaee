/**
 * @module tools/files/edit-file
 * `edit_file`: replaces an exact piece of text, which must be unique unless told otherwise.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { defineTool } from '../../tool/define-tool.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { MAX_READ_BYTES } from './read-file.ts'
import { decodeText } from './text.ts'
import { filePath } from './file-path.ts'

/** Replaces literal text in a file of the workspace. */
export const editFileTool = defineTool({
  name: 'edit_file',
  changes: 'current-line',
  description:
    'Replace exact text in a file of the workspace. old_string must match the file literally (whitespace and indentation included) and exactly once, unless replace_all is true. Read the file first to copy the text exactly.',
  parameters: z.object({
    path: filePath('File path, relative to the workspace root.'),
    old_string: z.string().min(1).describe('The exact text to replace.'),
    new_string: z.string().describe('The text to put in its place.'),
    replace_all: z
      .boolean()
      .optional()
      .describe('Replace every occurrence instead of requiring a unique one. Default false.'),
  }),
  async execute(
    { path, old_string: oldString, new_string: newString, replace_all: replaceAll = false },
    { workspace, signal },
  ) {
    if (oldString === newString) {
      throw new EitriError(
        'invalid_input',
        'old_string and new_string are identical, so the edit would change nothing. Give the new text in new_string.',
      )
    }
    const resolved = await workspace.resolve(path, 'write')
    const bytes = await workspace.readFile(resolved, { signal, maxBytes: MAX_READ_BYTES })
    const text = decodeText(bytes, resolved)
    if (!Buffer.from(text, 'utf8').equals(bytes)) {
      // Invalid UTF-8 decodes to U+FFFD: writing the text back would change bytes nobody edited.
      throw new EitriError(
        'binary_file',
        `File is not valid UTF-8 text: ${resolved}. edit_file would rewrite bytes outside the edit, so it refuses; the file is unchanged. Change it with write_file, or ask the user.`,
        { data: { path: resolved } },
      )
    }
    const count = occurrences(text, oldString)
    if (count === 0) {
      throw new EitriError(
        'no_match',
        `String not found in ${resolved}: old_string must match the file exactly, including whitespace and indentation. Read the file and copy the text to replace. The file is unchanged.`,
        { data: { path: resolved } },
      )
    }
    if (count > 1 && !replaceAll) {
      throw new EitriError(
        'ambiguous_match',
        `String found ${count} times in ${resolved}, must be unique: add surrounding lines to old_string so it matches once, or set replace_all: true to replace all ${count}. The file is unchanged.`,
        { data: { path: resolved, occurrences: count } },
      )
    }
    const updated = replaceAll
      ? text.split(oldString).join(newString)
      : replaceFirst(text, oldString, newString)
    await workspace.writeFile(resolved, updated, { signal })
    const replaced = replaceAll ? count : 1
    return toolSuccess(
      `Replaced ${replaced} occurrence${replaced === 1 ? '' : 's'} in ${resolved}`,
      {
        path: resolved,
        replacements: replaced,
        oldLength: text.length,
        newLength: updated.length,
      },
    )
  },
})

function occurrences(text: string, needle: string): number {
  let count = 0
  for (
    let index = text.indexOf(needle);
    index !== -1;
    index = text.indexOf(needle, index + needle.length)
  )
    count++
  return count
}

/** Replaces the first occurrence literally (String.replace would interpret `$` patterns). */
function replaceFirst(text: string, needle: string, replacement: string): string {
  const index = text.indexOf(needle)
  return text.slice(0, index) + replacement + text.slice(index + needle.length)
}
