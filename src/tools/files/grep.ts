/**
 * @module tools/files/grep
 * `grep`: lines matching a regular expression, across the workspace. The engine is RE2
 * (linear time), so no pattern can make a search run away; a deadline bounds the whole call.
 */
import { ignoredNote } from './ignored-note.ts'
import { compileGlob } from '../../workspace/glob-pattern.ts'
import { RE2JS } from 're2js'
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { defineTool } from '../../tool/define-tool.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { looksBinary } from './text.ts'

/** Most matching lines one call returns. */
export const MAX_GREP_MATCHES = 500
/** Longest line shown; longer ones are cut. */
export const MAX_GREP_LINE_CHARS = 300
/** Files over this size are skipped. */
export const MAX_GREP_FILE_BYTES = 20 * 1024 * 1024
/** The whole search stops after this long and says so. */
export const GREP_DEADLINE_MS = 10_000

/** Searches file contents by regular expression. */
export const grepTool = defineTool({
  name: 'grep',
  // It only reads the workspace: a model loop runs it without a durable intent first.
  readOnly: true,
  description: `Search file contents with a regular expression (RE2 syntax, like ripgrep: no backreferences or lookaround). Answers "path:line:text" lines, at most ${MAX_GREP_MATCHES}. Binary files, .git and what the .gitignore files ignore (in every folder, as git reads them) are skipped, unless path names an ignored folder (or one inside it).`,
  parameters: z.object({
    pattern: z.string().min(1).describe('Regular expression to search for.'),
    path: z
      .string()
      .min(1)
      .optional()
      .describe('File or folder to search, relative to the workspace root. Default: the root.'),
    glob: z
      .string()
      .min(1)
      .optional()
      .describe('Only search files whose path matches this glob, such as "*.ts" or "src/**/*.md".'),
    ignore_case: z.boolean().optional().describe('Match case-insensitively. Default false.'),
  }),
  async execute(
    { pattern, path = '.', glob, ignore_case: ignoreCase = false },
    { workspace, signal },
  ) {
    const regex = compile(pattern, ignoreCase)
    // A pattern without a `/` matches the last component: `*.ts` at any depth, `src/**/*.md`
    // from the root.
    const include = glob === undefined ? () => true : compileGlob(glob, { basename: true })
    const deadline = Date.now() + GREP_DEADLINE_MS
    const lines: string[] = []
    let matchCount = 0
    let filesSearched = 0
    let stoppedEarly: string | undefined
    for await (const entry of workspace.walk(path, {
      signal,
      gitignore: true,
    })) {
      if (entry.type !== 'file' || !include(entry.path)) continue
      if (Date.now() > deadline) {
        stoppedEarly = `stopped after ${GREP_DEADLINE_MS / 1000} s; narrow path or glob`
        break
      }
      const stat = await workspace.stat(entry.path)
      if (stat === undefined || stat.size > MAX_GREP_FILE_BYTES) continue
      const bytes = await workspace
        .readFile(entry.path, { signal, maxBytes: MAX_GREP_FILE_BYTES })
        .catch((error: unknown) => {
          // It grew past the limit since its size was taken: skipped like any larger file.
          if (EitriError.isInstance(error) && error.code === 'file_too_large') return undefined
          throw error
        })
      if (bytes === undefined || looksBinary(bytes)) continue
      filesSearched++
      for (const hit of matchingLines(regex, new TextDecoder().decode(bytes))) {
        matchCount++
        if (lines.length < MAX_GREP_MATCHES)
          lines.push(`${entry.path}:${hit.line}:${clip(hit.text)}`)
      }
    }
    if (matchCount > lines.length && stoppedEarly === undefined) {
      stoppedEarly = `showing the first ${lines.length} of ${matchCount} matching lines; narrow the pattern, path or glob`
    }
    const content =
      lines.length === 0
        ? `No matches found for ${pattern}${await ignoredNote(workspace, path, signal)}`
        : lines.join('\n')
    return toolSuccess(stoppedEarly === undefined ? content : `${content}\n[${stoppedEarly}]`, {
      pattern,
      matches: matchCount,
      filesSearched,
      truncated: stoppedEarly !== undefined,
    })
  },
})

function compile(pattern: string, ignoreCase: boolean): RE2JS {
  try {
    return RE2JS.compile(pattern, RE2JS.MULTILINE | (ignoreCase ? RE2JS.CASE_INSENSITIVE : 0))
  } catch (error) {
    throw new EitriError(
      'invalid_input',
      `pattern is not a valid regular expression: ${(error as Error).message}`,
    )
  }
}

/** Each line holding a match, once, with its 1-based number. */
function* matchingLines(regex: RE2JS, text: string): Generator<{ line: number; text: string }> {
  const matcher = regex.matcher(text)
  let position = 0
  let line = 1
  let lineStart = 0
  while (position <= text.length && matcher.find(position)) {
    const start = matcher.start()
    // A match at the very end is on no line: after the final newline, or in an empty file.
    if (start === text.length && (text.length === 0 || text.endsWith('\n'))) break
    for (
      let newline = text.indexOf('\n', lineStart);
      newline !== -1 && newline < start;
      newline = text.indexOf('\n', lineStart)
    ) {
      line++
      lineStart = newline + 1
    }
    const lineEnd = text.indexOf('\n', start)
    const end = lineEnd === -1 ? text.length : lineEnd
    yield { line, text: text.slice(lineStart, end) }
    position = end + 1
  }
}

function clip(line: string): string {
  const trimmed = line.endsWith('\r') ? line.slice(0, -1) : line
  return trimmed.length > MAX_GREP_LINE_CHARS
    ? `${trimmed.slice(0, MAX_GREP_LINE_CHARS)}…`
    : trimmed
}
