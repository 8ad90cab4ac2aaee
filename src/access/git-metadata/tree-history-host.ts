/**
 * @module access/git-metadata/tree-history-host
 * The history rules' view of a line's tree (what is there before a change), and of one
 * proposed file content.
 */
import path from 'node:path'
import { contentBytes, contentLength } from '../../tool/file-content.ts'
import type { FileContent } from '../../ports/workspace-view.ts'
import { missingObjects, verifyPack } from '../../workspace/git/object-checks.ts'
import { objectFormatOf } from '../../workspace/git/object-format.ts'
import { commitParents, linkTargetsIn, treeChanges } from '../../workspace/git/tree-changes.ts'
import type { WorkspaceTree } from '../../workspace/workspace-tree.ts'
import type { HistoryHost, HistoryProposal } from './history-rules.ts'

/** A repository configuration is a few kilobytes; a larger one is not read for its format. */
const MAX_CONFIG_BYTES = 1024 * 1024

/**
 * The host side of the history rules, read from a tree. Objects are looked up and packs
 * verified by git, on the tree's folder when it has one on disk (a fork's tree holds no
 * repository: every object counts as missing there).
 */
export function treeHistoryHost(tree: WorkspaceTree): HistoryHost {
  const read = async (relative: string, maxBytes: number): Promise<Buffer | undefined> => {
    const stat = await tree.stat(relative)
    if (stat?.type !== 'file' || stat.size > maxBytes) return undefined
    const bytes = await tree.readFile(relative)
    return bytes.byteLength > maxBytes ? undefined : Buffer.from(bytes)
  }
  const objectsFolder = (gitDir: string): string | undefined =>
    tree.root === undefined ? undefined : path.join(tree.root, gitDir, 'objects')
  return {
    async kind(relative) {
      return (await tree.stat(relative))?.type
    },
    read,
    async list(relative) {
      const stat = await tree.stat(relative)
      return stat?.type === 'directory' ? tree.list(relative) : []
    },
    async objectFormat(gitDir) {
      return objectFormatOf(await read(`${gitDir}/config`, MAX_CONFIG_BYTES))
    },
    missingObjects(gitDir, ids, format) {
      return missingObjects(objectsFolder(gitDir), ids, format)
    },
    verifyPack(gitDir, pack, index, format) {
      return verifyPack(pack, index, format, objectsFolder(gitDir))
    },
    treeChanges(gitDir, staged, comparisons, format) {
      return treeChanges(objectsFolder(gitDir), staged, comparisons, format)
    },
    commitParents(gitDir, staged, commits, format) {
      return commitParents(objectsFolder(gitDir), staged, commits, format)
    },
    linkTargets(gitDir, staged, ids, format) {
      return linkTargetsIn(objectsFolder(gitDir), staged, ids, format)
    },
  }
}

/** One proposed file content, compared with what `host` holds at the same path. */
export function contentProposal(data: FileContent, host: HistoryHost): HistoryProposal {
  // Read once: a content read in pieces is judged and written as these bytes.
  const bytes = Buffer.from(contentBytes(data))
  return {
    async read(_path, maxBytes) {
      return bytes.byteLength > maxBytes ? undefined : bytes
    },
    async sameAsHost(relative) {
      const length = contentLength(bytes)
      const old = await host.read(relative, length)
      return old !== undefined && old.byteLength === length && old.equals(bytes)
    },
  }
}
