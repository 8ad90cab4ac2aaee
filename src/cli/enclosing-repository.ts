/**
 * @module cli/enclosing-repository
 * The workspace is the folder eitri starts in. Started in a folder of a repository (`src/`),
 * its programs see only that folder: git finds no repository and `npm test` no package.json.
 * The command says so, naming the folder to run it from, rather than leaving a newcomer with
 * `fatal: not a git repository`.
 */
import fs from 'node:fs'
import path from 'node:path'

/**
 * A note for stderr when `workspace` lies inside a git repository but is not its top folder;
 * undefined otherwise.
 */
export function enclosingRepositoryNote(workspace: string): string | undefined {
  let root: string
  try {
    root = fs.realpathSync(workspace)
  } catch {
    return undefined
  }
  if (fs.existsSync(path.join(root, '.git'))) return undefined
  for (let folder = path.dirname(root); ; folder = path.dirname(folder)) {
    if (fs.existsSync(path.join(folder, '.git')))
      return `eitri: the workspace is ${root}, inside the git repository ${folder}: programs see only the workspace, so git there finds no repository and the project's other files are missing. To work on the whole project, run eitri in ${folder} or give --workspace ${folder}.\n`
    if (folder === path.dirname(folder)) return undefined
  }
}
