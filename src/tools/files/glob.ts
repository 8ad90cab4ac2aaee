/**
 * @module tools/files/glob
 * `glob`: files whose workspace-relative path matches a pattern.
 */
import picomatch from 'picomatch'
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { defineTool } from '../../tool/define-tool.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import type { WorkspaceView } from '../../tool/workspace-view.ts'
import { gitignorePrune } from './gitignore.ts'

/** Most paths one glob returns. */
export const MAX_GLOB_RESULTS = 1000

/** Lists files matching a glob pattern. */
export const globTool = defineTool({
  name: 'glob',
  description: `Find files by glob pattern, such as "**/*.ts" or "src/*.json". The pattern is relative to path (default: the workspace root); results are workspace-relative paths, sorted, at most ${MAX_GLOB_RESULTS}. .git and files ignored by the root .gitignore are skipped.`,
  parameters: z.object({
    pattern: z
      .string()
      .min(1)
      .describe('Glob pattern: * within a folder, ** across folders, {a,b} alternatives.'),
    path: z
      .string()
      .min(1)
      .optional()
      .describe('Folder to search in, relative to the workspace root. Default: the root.'),
  }),
  async execute({ pattern, path = '.' }, { workspace, signal }) {
    checkPattern(pattern)
    const base = await workspace.resolve(path, 'read')
    const { base: literalBase } = picomatch.scan(pattern)
    const matches = picomatch(pattern, { dot: true })
    const prefix = base === '' ? '' : `${base}/`
    const start = await narrowStart(workspace, base, literalBase)
    const found: string[] = []
    if (start !== undefined) {
      for await (const entry of workspace.walk(start, {
        signal,
        prune: await gitignorePrune(workspace),
      })) {
        if (entry.type === 'directory') continue
        if (matches(entry.path.slice(prefix.length))) found.push(entry.path)
      }
    }
    found.sort()
    const shown = found.slice(0, MAX_GLOB_RESULTS)
    const note =
      found.length > shown.length
        ? `\n[showing the first ${shown.length} of ${found.length} matches; narrow the pattern or path]`
        : ''
    const content = found.length === 0 ? `No files match ${pattern}` : shown.join('\n') + note
    return toolSuccess(content, {
      pattern,
      count: found.length,
      truncated: found.length > shown.length,
    })
  },
})

/**
 * Where the walk may begin: the pattern's literal leading folders, when they exist and are real
 * folders (not links, whose entries would carry another prefix); otherwise the search folder.
 */
async function narrowStart(
  workspace: WorkspaceView,
  base: string,
  literalBase: string,
): Promise<string | undefined> {
  const lexical = [base, literalBase].filter((part) => part !== '').join('/')
  if (literalBase === '') return base
  const stat = await workspace.stat(lexical)
  if (stat === undefined) return undefined
  return (await workspace.resolve(lexical, 'read')) === lexical ? lexical : base
}

function checkPattern(pattern: string): void {
  if (pattern.startsWith('/') || pattern.split('/').includes('..')) {
    throw new EitriError(
      'invalid_input',
      `pattern must stay inside the folder searched: no leading "/" and no ".." (got ${pattern}). Use path to choose the folder.`,
    )
  }
}
