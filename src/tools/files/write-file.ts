/**
 * @module tools/files/write-file
 * `write_file`: creates or replaces a file, atomically.
 */
import { z } from 'zod'
import { defineTool } from '../../tool/define-tool.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { filePath } from './file-path.ts'

/** Writes a whole file of the workspace. */
export const writeFileTool = defineTool({
  name: 'write_file',
  changes: 'current-line',
  description:
    'Create or overwrite a file of the workspace with the given text. Creates missing folders. The write is atomic: readers see the old file or the new one, never a mix. Prefer edit_file to change part of an existing file.',
  parameters: z.object({
    path: filePath('File path, relative to the workspace root.'),
    content: z.string().describe('The complete new content of the file.'),
  }),
  async execute({ path, content }, { workspace, signal }) {
    const receipt = await workspace.writeFile(path, content, { signal })
    return toolSuccess(
      `Wrote ${receipt.bytes} bytes to ${receipt.path}${receipt.created ? ' (new file)' : ''}`,
      { path: receipt.path, bytes: receipt.bytes, created: receipt.created },
    )
  },
})
