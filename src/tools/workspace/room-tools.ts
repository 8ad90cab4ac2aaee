/**
 * @module tools/workspace/room-tools
 * The workspace's files by line, without switching the session: list, read, and write several
 * files in one commit, through the same gates as the file tools.
 */
import { createHash } from 'node:crypto'
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { defineTool } from '../../tool/define-tool.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { MAX_READ_BYTES } from '../files/read-file.ts'
import { decodeText } from '../files/text.ts'
import { linesOf } from './lines-of.ts'
import { filePath } from '../files/file-path.ts'

/** A content's digest: what a person approved to be written, whatever its size. */
function sha256(content: string): string {
  return createHash('sha256').update(content).digest('hex')
}

const forkOption = z
  .string()
  .min(1)
  .optional()
  .describe('A fork by id or name, or "main". Default: the line this session works on.')

/** Lists the files of a line. */
export const roomFilesTool = defineTool({
  name: 'room_files',
  description:
    'List the files of a workspace line (workspace-relative paths, sorted): .git and what the .gitignore files ignore are left out, as git leaves them out.',
  parameters: z.object({ fork: forkOption }),
  async execute({ fork }, ctx) {
    const lines = linesOf(ctx)
    const workspace = await lines.workspace(fork ?? lines.current, { signal: ctx.signal })
    const files: string[] = []
    for await (const entry of workspace.walk('', { signal: ctx.signal, gitignore: true }))
      if (entry.type !== 'directory') files.push(entry.path)
    files.sort()
    return toolSuccess(files.length === 0 ? '(no files)' : files.join('\n'), {
      count: files.length,
      line: lines.resolve(fork ?? lines.current),
    })
  },
})

/** Reads a file of a line. */
export const roomReadTool = defineTool({
  name: 'room_read',
  description: 'Read a text file of a workspace line.',
  parameters: z.object({
    path: filePath('Workspace-relative path.'),
    fork: forkOption,
  }),
  async execute({ path, fork }, ctx) {
    const lines = linesOf(ctx)
    const workspace = await lines.workspace(fork ?? lines.current, { signal: ctx.signal })
    const resolved = await workspace.resolve(path, 'read')
    return toolSuccess(
      decodeText(
        await workspace.readFile(resolved, { signal: ctx.signal, maxBytes: MAX_READ_BYTES }),
        resolved,
      ),
      { path: resolved },
    )
  },
})

/** Writes several files of a line as one commit. */
export const roomWriteTool = defineTool({
  name: 'room_write',
  description:
    'Write several files of a workspace line and record them as one commit, through the same checks as write_file.',
  parameters: z.object({
    files: z
      .array(z.object({ path: filePath('Workspace-relative path.'), content: z.string() }))
      .min(1)
      .max(500)
      .describe('The files to write.'),
    fork: forkOption,
    message: z.string().min(1).optional().describe('The commit message.'),
  }),
  changes: ({ fork }, ctx) => {
    const lines = linesOf(ctx)
    return lines.resolve(fork ?? lines.current)
  },
  async execute({ files, fork, message }, ctx) {
    const lines = linesOf(ctx)
    const line = lines.resolve(fork ?? lines.current)
    const workspace = await lines.workspace(line, {
      signal: ctx.signal,
      write: {
        tool: 'room_write',
        summary: `write ${files.length} file${files.length === 1 ? '' : 's'}: ${files
          .slice(0, 20)
          .map((file) => file.path)
          .join(', ')}${files.length > 20 ? ', …' : ''}`,
        writes: files.map((file) => [file.path, sha256(file.content)]),
      },
    })
    // Every path is judged before any is written: a refused one leaves the line as it was.
    const seen = new Map<string, string>()
    for (const file of files) {
      const resolved = await workspace.resolve(file.path, 'write')
      const earlier = seen.get(resolved)
      // Two contents for one file in one commit: only the last would land, silently.
      if (earlier !== undefined)
        throw new EitriError(
          'invalid_input',
          `files names ${resolved} twice (${JSON.stringify(earlier)} and ${JSON.stringify(file.path)}): give each file once, with the content it should have.`,
        )
      seen.set(resolved, file.path)
    }
    // All or nothing: judged together (what the files make as a whole, too), and put back if a
    // write fails midway.
    const written = (
      await workspace.writeFiles(
        files.map((file) => ({ path: file.path, data: file.content })),
        { signal: ctx.signal },
      )
    ).map((receipt) => receipt.path)
    const commit = await lines.commit(line, message ?? `write ${written.length} file(s)`)
    return toolSuccess(
      `Wrote ${written.length} file(s) to ${line} in commit ${commit.slice(0, 10)}: ${written.join(', ')}`,
      { line, commit, paths: written },
    )
  },
})
