/**
 * @module eval/capabilities/fs-capability
 * `fs`: the workspace's files, through the same path policy and access as the file tools.
 * Paths are workspace-relative; nothing outside the workspace, in eitri's state or (for
 * writes) under a protected path is reachable, and read-only access refuses every write.
 */
import { compileGlob } from '../../workspace/glob-pattern.ts'
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import type { ToolContext } from '../../tool/tool-context.ts'
import { capabilityFunction, type Capability } from '../capability.ts'
import { MAX_RESULT_BYTES } from '../eval-limits.ts'
import { answerText, readInParts, sizeUp, unfinishedCharacter } from './file-reads.ts'

/** Most paths `fs.glob` answers. */
export const MAX_GLOB_PATHS = 10_000
/** Most entries `fs.list` answers. */
export const MAX_LIST_ENTRIES = 10_000

const encoding = z.strictObject({ encoding: z.enum(['utf8', 'base64']).optional() }).optional()

/** Refuses a write under read-only access, naming the access in force. */
function checkWritable(ctx: ToolContext, what: string): void {
  if (ctx.access?.level === 'read-only') {
    throw new EitriError(
      'read_only_access',
      `${what} refused: the access in force is read-only, so nothing may be written. Read instead, or ask the person to grant workspace-write access.`,
    )
  }
}

/** The `fs` capability. */
export const fsCapability: Capability = {
  name: 'fs',
  purpose: 'Read and write the files of the workspace (paths relative to its root).',
  example:
    "const text = await fs.readFile('README.md')\nawait fs.writeFile('notes/summary.md', text.slice(0, 200))",
  functions: [
    capabilityFunction({
      name: 'readFile',
      signature:
        "readFile(path: string, options?: { encoding?: 'utf8' | 'base64' }): Promise<string>",
      description: `The whole file as text (UTF-8), or as base64 for binary files; at most ${MAX_RESULT_BYTES} bytes (read larger files with readRange).`,
      parameters: z.tuple([z.string().min(1), encoding]),
      run: async ([path, options], scope) => {
        const { ctx } = scope
        const { resolved, size } = await sizeUp(path, scope)
        // Refused by its size before anything is read: never materialized whole.
        if (size > MAX_RESULT_BYTES) throw new EitriError('file_too_large', readInParts(path, size))
        // The bytes read, and about as much again for the answer made of them.
        await scope.bytes.reserve(2 * size)
        let data: Uint8Array
        try {
          data = await ctx.workspace.readFile(resolved, {
            signal: ctx.signal,
            maxBytes: MAX_RESULT_BYTES,
          })
        } catch (error) {
          // It grew past the limit since its size was taken.
          if (EitriError.isInstance(error) && error.code === 'file_too_large')
            throw new EitriError('file_too_large', readInParts(path, Number(error.data['size'])))
          throw error
        }
        return answerText(data, path, options?.encoding ?? 'utf8', scope)
      },
    }),
    capabilityFunction({
      name: 'readRange',
      signature:
        "readRange(path: string, options?: { offset?: number, length?: number, encoding?: 'utf8' | 'base64' }): Promise<{ content, offset, bytes, nextOffset, size, done }>",
      description: `Part of a file: up to length bytes (default and most ${MAX_RESULT_BYTES}) from offset (default 0). As UTF-8 a part ends before a character it would cut; read on from nextOffset until done.`,
      parameters: z.tuple([
        z.string().min(1),
        z
          .strictObject({
            offset: z.number().int().nonnegative().optional(),
            length: z.number().int().positive().max(MAX_RESULT_BYTES).optional(),
            encoding: z.enum(['utf8', 'base64']).optional(),
          })
          .optional(),
      ]),
      run: async ([path, options], scope) => {
        const { ctx } = scope
        const offset = options?.offset ?? 0
        const as = options?.encoding ?? 'utf8'
        const { resolved, size } = await sizeUp(path, scope)
        const length = Math.min(options?.length ?? MAX_RESULT_BYTES, Math.max(size - offset, 0))
        await scope.bytes.reserve(2 * length)
        const data = await ctx.workspace.readFile(resolved, {
          signal: ctx.signal,
          range: { offset, length },
        })
        let kept = data
        if (as === 'utf8') {
          if (offset > 0 && data.length > 0 && ((data[0] as number) & 0xc0) === 0x80) {
            throw new EitriError(
              'invalid_input',
              `Offset ${offset} of ${path} is inside a UTF-8 character: start at a nextOffset of an earlier part, or read with encoding 'base64'.`,
            )
          }
          // A character cut by the end of the part is left whole for the next part.
          if (offset + data.length < size)
            kept = data.subarray(0, data.length - unfinishedCharacter(data))
          if (kept.length === 0 && data.length > 0) {
            throw new EitriError(
              'invalid_input',
              `A length of ${data.length} cannot hold the character at offset ${offset} of ${path}: ask for at least 4 bytes.`,
            )
          }
        }
        const nextOffset = offset + kept.length
        return {
          content: await answerText(kept, path, as, scope),
          offset,
          bytes: kept.length,
          nextOffset,
          size,
          done: nextOffset >= size,
        }
      },
    }),
    capabilityFunction({
      name: 'writeFile',
      signature:
        "writeFile(path: string, content: string, options?: { encoding?: 'utf8' | 'base64' }): Promise<{ path, bytes, created }>",
      description:
        'Creates or replaces a file atomically, creating folders; an existing file keeps its mode.',
      parameters: z.tuple([z.string().min(1), z.string(), encoding]),
      run: async ([path, content, options], { ctx }) => {
        checkWritable(ctx, `fs.writeFile(${JSON.stringify(path)})`)
        const data = options?.encoding === 'base64' ? Buffer.from(content, 'base64') : content
        const receipt = await ctx.workspace.writeFile(path, data, { signal: ctx.signal })
        return { path: receipt.path, bytes: receipt.bytes, created: receipt.created }
      },
    }),
    capabilityFunction({
      name: 'list',
      signature: 'list(path?: string): Promise<{ name, path, type }[]>',
      description:
        "The entries of one folder (default: the root), sorted; type is 'file', 'directory', 'symlink' or 'other'.",
      parameters: z.tuple([z.string().optional()]),
      run: async ([path = ''], { ctx }) => {
        const base = await ctx.workspace.resolve(path, 'read')
        const depth = base === '' ? 1 : base.split('/').length + 1
        const entries: { name: string; path: string; type: string }[] = []
        for await (const entry of ctx.workspace.walk(base, {
          signal: ctx.signal,
          prune: (candidate) => candidate.path.split('/').length > depth,
        })) {
          if (entries.length >= MAX_LIST_ENTRIES) break
          entries.push({
            name: entry.path.split('/').at(-1) ?? entry.path,
            path: entry.path,
            type: entry.type,
          })
        }
        return entries
      },
    }),
    capabilityFunction({
      name: 'glob',
      signature: 'glob(pattern: string, options?: { path?: string }): Promise<string[]>',
      description: `Workspace-relative paths of files matching a glob (** across folders), sorted, at most ${MAX_GLOB_PATHS}; .git and what the .gitignore files ignore are skipped, unless options.path names an ignored folder.`,
      parameters: z.tuple([
        z.string().min(1),
        z.strictObject({ path: z.string().optional() }).optional(),
      ]),
      run: async ([pattern, options], { ctx }) => {
        const base = await ctx.workspace.resolve(options?.path ?? '', 'read')
        const matches = compileGlob(pattern)
        const prefix = base === '' ? '' : `${base}/`
        const found: string[] = []
        // As the glob tool: what git ignores (node_modules, build outputs) is not searched.
        for await (const entry of ctx.workspace.walk(base, {
          signal: ctx.signal,
          gitignore: true,
        })) {
          if (entry.type !== 'directory' && matches(entry.path.slice(prefix.length)))
            found.push(entry.path)
          // Held to the cap while walking: a huge tree never makes a huge list.
          if (found.length >= MAX_GLOB_PATHS) break
        }
        return found.sort()
      },
    }),
    capabilityFunction({
      name: 'stat',
      signature: 'stat(path: string): Promise<{ type, size, mode, modifiedMs } | null>',
      description:
        'What a path is, without following a final symbolic link; null when it does not exist.',
      parameters: z.tuple([z.string()]),
      run: async ([path], { ctx }) => {
        const stat = await ctx.workspace.stat(path, { signal: ctx.signal })
        return stat === undefined
          ? null
          : { type: stat.type, size: stat.size, mode: stat.mode, modifiedMs: stat.modifiedMs }
      },
    }),
    capabilityFunction({
      name: 'exists',
      signature: 'exists(path: string): Promise<boolean>',
      description: 'Whether a path exists (a path the policy refuses throws instead).',
      parameters: z.tuple([z.string()]),
      run: async ([path], { ctx }) =>
        (await ctx.workspace.stat(path, { signal: ctx.signal })) !== undefined,
    }),
    capabilityFunction({
      name: 'remove',
      signature: 'remove(path: string): Promise<{ path }>',
      description:
        'Removes a file, a symbolic link (never its target) or an empty folder; missing is not an error.',
      parameters: z.tuple([z.string().min(1)]),
      run: async ([path], { ctx }) => {
        checkWritable(ctx, `fs.remove(${JSON.stringify(path)})`)
        // A final link is removed itself, never what it points to.
        const resolved = await ctx.workspace.resolve(path, 'write', { followFinal: false })
        await ctx.workspace.remove(resolved, { signal: ctx.signal })
        return { path: resolved }
      },
    }),
  ],
}
