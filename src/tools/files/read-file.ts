/**
 * @module tools/files/read-file
 * `read_file`: a text file, whole or a range of lines.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { defineTool } from '../../tool/define-tool.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { decodeText } from './text.ts'
import { filePath } from './file-path.ts'

/** Lines returned when no `limit` is given. */
export const DEFAULT_READ_LINES = 2000
/** Files over this size are not read at once. */
export const MAX_READ_BYTES = 32 * 1024 * 1024

/** Reads a text file of the workspace. */
export const readFileTool = defineTool({
  name: 'read_file',
  // It only reads the workspace: a model loop runs it without a durable intent first.
  readOnly: true,
  description: `Read a text file of the workspace. Paths are relative to the workspace root. Returns the file's text exactly; for long files, at most ${DEFAULT_READ_LINES} lines at a time: use offset (a 1-based line number) and limit to read further.`,
  parameters: z.object({
    path: filePath('File path, relative to the workspace root.'),
    offset: z.number().int().min(1).optional().describe('First line to read, 1-based. Default 1.'),
    limit: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(`How many lines to read. Default ${DEFAULT_READ_LINES}.`),
  }),
  async execute({ path, offset = 1, limit = DEFAULT_READ_LINES }, { workspace, signal }) {
    const resolved = await workspace.resolve(path, 'read')
    const stat = await workspace.stat(resolved)
    if (stat !== undefined && stat.size > MAX_READ_BYTES) {
      throw new EitriError(
        'file_too_large',
        `File is ${stat.size} bytes, over the ${MAX_READ_BYTES}-byte read limit: ${resolved}. Search it with grep instead.`,
      )
    }
    // Bounded even if the file grew since its size was taken.
    const text = decodeText(
      await workspace.readFile(resolved, { signal, maxBytes: MAX_READ_BYTES }),
      resolved,
    )
    const range = lineRange(text, offset, limit)
    const metadata = {
      path: resolved,
      size: stat?.size ?? 0,
      totalLines: range.totalLines,
      fromLine: range.fromLine,
      toLine: range.toLine,
    }
    if (range.fromLine > range.totalLines && range.totalLines > 0) {
      throw new EitriError(
        'invalid_input',
        `offset ${offset} is past the end of ${resolved}, which has ${range.totalLines} lines.`,
      )
    }
    const more = range.toLine < range.totalLines
    const note = more
      ? `\n\n[showing lines ${range.fromLine}-${range.toLine} of ${range.totalLines}; call read_file with offset ${range.toLine + 1} to read more]`
      : ''
    return toolSuccess(text.slice(range.start, range.end) + note, {
      ...metadata,
      complete: !more && offset === 1,
    })
  },
})

interface LineRange {
  start: number
  end: number
  fromLine: number
  toLine: number
  totalLines: number
}

/** Finds the character span of lines `offset` to `offset + limit - 1`, newlines included. */
function lineRange(text: string, offset: number, limit: number): LineRange {
  const totalLines = text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
  let start = 0
  for (let line = 1; line < offset && start < text.length; line++) {
    const newline = text.indexOf('\n', start)
    start = newline === -1 ? text.length : newline + 1
  }
  let end = start
  let lines = 0
  while (lines < limit && end < text.length) {
    const newline = text.indexOf('\n', end)
    end = newline === -1 ? text.length : newline + 1
    lines++
  }
  return {
    start,
    end,
    fromLine: offset,
    toLine: Math.min(offset + lines - 1, totalLines),
    totalLines,
  }
}
