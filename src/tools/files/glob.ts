/**
 * @module tools/files/glob
 * `glob`: files whose workspace-relative path matches a pattern.
 */
import picomatch from 'picomatch'
import { compileGlob } from '../../workspace/glob-pattern.ts'
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { defineTool } from '../../tool/define-tool.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import type { WalkEntry, WorkspaceView } from '../../ports/workspace-view.ts'
import { ignoredNote } from './ignored-note.ts'

/** Most paths one glob returns. */
export const MAX_GLOB_RESULTS = 1000

/** Lists files matching a glob pattern. */
export const globTool = defineTool({
  name: 'glob',
  // It only reads the workspace: a model loop runs it without a durable intent first.
  readOnly: true,
  description: `Find files by glob pattern, such as "**/*.ts" or "src/*.json". The pattern is relative to path (default: the workspace root); results are workspace-relative paths, sorted, at most ${MAX_GLOB_RESULTS}. .git and what the .gitignore files ignore (in every folder, as git reads them) are skipped, unless path names an ignored folder (or one inside it).`,
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
    const matches = compileGlob(pattern)
    const prefix = base === '' ? '' : `${base}/`
    const start = await narrowStart(workspace, base, literalBase)
    const found: string[] = []
    if (start !== undefined) {
      // From the folder searched, kept to the pattern's leading folders: the .gitignore files
      // on the way there apply as they do to any other folder the search enters.
      const prune = start === base ? undefined : (entry: WalkEntry) => !onPath(entry.path, start)
      for await (const entry of workspace.walk(base, {
        signal,
        gitignore: true,
        ...(prune === undefined ? {} : { prune }),
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
    const content =
      found.length === 0
        ? `No files match ${pattern}${await ignoredNote(workspace, base, signal)}`
        : shown.join('\n') + note
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

/** Whether `path` lies on the way to `folder`, is it, or lies inside it. */
function onPath(path: string, folder: string): boolean {
  return path === folder || folder.startsWith(`${path}/`) || path.startsWith(`${folder}/`)
}

function checkPattern(pattern: string): void {
  if (pattern.startsWith('/') || pattern.split('/').includes('..')) {
    throw new EitriError(
      'invalid_input',
      `pattern must stay inside the folder searched: no leading "/" and no ".." (got ${pattern}). Use path to choose the folder.`,
    )
  }
}
