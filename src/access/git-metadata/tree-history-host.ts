/**
 * @module access/git-metadata/tree-history-host
 * The history rules' view of a line's tree (what is there before a change), and of one
 * proposed file content.
 */
import { contentBytes, contentLength } from '../../tool/file-content.ts'
import type { FileContent } from '../../tool/workspace-view.ts'
import type { WorkspaceTree } from '../../workspace/workspace-tree.ts'
import type { HistoryHost, HistoryProposal } from './history-rules.ts'

/** The host side of the history rules, read from a tree. */
export function treeHistoryHost(tree: WorkspaceTree): HistoryHost {
  return {
    async kind(path) {
      return (await tree.stat(path))?.type
    },
    async read(path, maxBytes) {
      const stat = await tree.stat(path)
      if (stat?.type !== 'file' || stat.size > maxBytes) return undefined
      const bytes = await tree.readFile(path)
      return bytes.byteLength > maxBytes ? undefined : Buffer.from(bytes)
    },
    async list(path) {
      const stat = await tree.stat(path)
      return stat?.type === 'directory' ? tree.list(path) : []
    },
  }
}

/** One proposed file content, compared with what `host` holds at the same path. */
export function contentProposal(data: FileContent, host: HistoryHost): HistoryProposal {
  return {
    async read(_path, maxBytes) {
      return contentLength(data) > maxBytes ? undefined : Buffer.from(contentBytes(data))
    },
    async sameAsHost(path) {
      const length = contentLength(data)
      const old = await host.read(path, length)
      return old !== undefined && old.byteLength === length && old.equals(contentBytes(data))
    },
  }
}
