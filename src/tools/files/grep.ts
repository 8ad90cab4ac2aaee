/**
 * @module tools/files/grep
 * `grep`: lines matching a regular expression, across the workspace. The engine is RE2
 * (linear time), so no pattern can make a search run away; a deadline bounds the whole call.
 */
import { ignoredNote } from './ignored-note.ts'
import { compileGlob } from '../../workspace/glob-pattern.ts'
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { defineTool } from '../../tool/define-tool.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import type { RE2JS } from 're2js'
import { looksBinary } from './text.ts'
import {
  compilePattern,
  INLINE_MATCH_BYTES,
  LargeFileMatcher,
  matchText,
  MAX_GREP_LINE_CHARS,
} from './grep-matching.ts'

export { MAX_GREP_LINE_CHARS }

/** Most matching lines one call returns. */
export const MAX_GREP_MATCHES = 500
/** Files over this size are skipped. */
export const MAX_GREP_FILE_BYTES = 20 * 1024 * 1024
/** The whole search stops after this long and says so. */
export const GREP_DEADLINE_MS = 10_000
/** How long the search runs on the server's thread before it lets other work in. */
const YIELD_EVERY_MS = 50

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
    // A small file is matched here; a large one in a worker thread that the deadline (or the
    // call's cancel) ends mid-file, so no pattern holds the server's thread (decision 0049).
    const stop = AbortSignal.any([AbortSignal.timeout(GREP_DEADLINE_MS), signal])
    const large = new LargeFileMatcher()
    const lines: string[] = []
    let matchCount = 0
    let filesSearched = 0
    let unreadable = 0
    let stoppedEarly: string | undefined
    let yielded = Date.now()
    try {
      for await (const entry of workspace.walk(path, {
        signal,
        gitignore: true,
      })) {
        if (entry.type !== 'file' || !include(entry.path)) continue
        if (stop.aborted) break
        // The walk and small reads never wait on anything: let other calls (and a cancel) in.
        if (Date.now() - yielded > YIELD_EVERY_MS) {
          await new Promise((resolve) => setImmediate(resolve))
          yielded = Date.now()
        }
        // Read without a stat first: the read's own bound skips a large file, and each look
        // at a path goes through the path policy again (a third of grep's time on main, and
        // in a fork a read of the whole file to learn its size).
        const bytes = await workspace
          .readFile(entry.path, { signal, maxBytes: MAX_GREP_FILE_BYTES })
          .catch((error: unknown) => {
            // Too large, or gone (or no longer a regular file) since the walk listed it.
            if (
              EitriError.isInstance(error) &&
              (error.code === 'file_too_large' || error.code === 'not_found')
            )
              return undefined
            // One the workspace's owner may not read (decision 0060): passed over, and counted.
            if (EitriError.isInstance(error) && error.code === 'permission_denied') {
              unreadable++
              return undefined
            }
            throw error
          })
        if (bytes === undefined || looksBinary(bytes)) continue
        const keep = MAX_GREP_MATCHES - lines.length
        const hits =
          bytes.byteLength <= INLINE_MATCH_BYTES
            ? matchText(regex, new TextDecoder().decode(bytes), keep)
            : await large.match({ pattern, ignoreCase, bytes, keep }, stop)
        if (hits === undefined) break
        filesSearched++
        matchCount += hits.count
        for (const hit of hits.lines) lines.push(`${entry.path}:${hit.line}:${hit.text}`)
      }
    } finally {
      await large.close()
    }
    if (stop.aborted)
      stoppedEarly = `stopped after ${GREP_DEADLINE_MS / 1000} s; narrow path or glob`
    if (matchCount > lines.length && stoppedEarly === undefined) {
      stoppedEarly = `showing the first ${lines.length} of ${matchCount} matching lines; narrow the pattern, path or glob`
    }
    const content =
      lines.length === 0
        ? `No matches found for ${pattern}${await ignoredNote(workspace, path, signal)}`
        : lines.join('\n')
    const passedOver =
      unreadable === 0
        ? ''
        : `\n[passed over ${unreadable} file${unreadable === 1 ? '' : 's'} the workspace's owner may not read]`
    const shown = `${content}${passedOver}`
    return toolSuccess(stoppedEarly === undefined ? shown : `${shown}\n[${stoppedEarly}]`, {
      pattern,
      matches: matchCount,
      filesSearched,
      truncated: stoppedEarly !== undefined,
    })
  },
})

function compile(pattern: string, ignoreCase: boolean): RE2JS {
  try {
    return compilePattern(pattern, ignoreCase)
  } catch (error) {
    throw new EitriError(
      'invalid_input',
      `pattern is not a valid regular expression: ${(error as Error).message}`,
    )
  }
}
