/**
 * @module workshop/fork-git-commits
 * The commits a program made with git in a fork. They live in the fork's kept layer (its view of
 * `.git`: the references and loose objects git wrote there), and a merge brings a fork's files,
 * never git's writes, into the user's repository (decision 0017). They are read just before the
 * layer goes, so the merge's answer can name them and say what to do.
 *
 * Jailed programs wrote everything read here: no link is followed (each folder is checked with
 * `lstat`, each file opened with `O_NOFOLLOW` and read only when it is a regular file under a
 * size bound), objects are inflated with a bound, and subjects lose their control characters.
 * Only loose references under `refs/heads` and loose objects are read; a branch whose commits
 * git packed is named without them.
 */
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { isReferenceName, UserGitRefs } from '../workspace/user-git-refs.ts'

/** A branch whose value in the fork differs from the user's repository's. */
export interface ForkBranchCommits {
  /** `main`, `feature/x`: the name under `refs/heads`. */
  readonly branch: string
  /** The commit the branch points to in the fork. */
  readonly fork: string
  /** The commit it points to in the user's repository; none: the fork made the branch. */
  readonly main: string | undefined
  /** The fork's commits on it, newest first (first parents, up to what the user's repository has). */
  readonly commits: readonly { readonly id: string; readonly subject: string }[]
  /** Whether there are more commits than listed (or unreadable ones). */
  readonly more: boolean
}

const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/
const MAX_REFERENCE_BYTES = 256
const MAX_OBJECT_BYTES = 1024 * 1024
const MAX_BRANCHES = 50
const MAX_COMMITS_PER_BRANCH = 100
const MAX_SUBJECT_CHARS = 80

/**
 * The branches of the fork whose kept layer is `keptFolder` that differ from those of the user's
 * repository at `mainRoot/.git`, each with the fork's commits on it. Never throws: what cannot
 * be read is left out.
 */
export function forkBranchCommits(keptFolder: string, mainRoot: string): ForkBranchCommits[] {
  const gitDir = path.join(keptFolder, '.git')
  if (!isFolder(keptFolder) || !isFolder(gitDir)) return []
  const reading = new UserGitRefs(mainRoot).read()
  const mainRefs = reading.type === 'recorded' ? reading.refs : new Map<string, string>()
  const branches: ForkBranchCommits[] = []
  // A commit listed under one branch is not listed again under another made from it.
  const listed = new Set<string>()
  for (const [branch, fork] of looseBranches(gitDir)) {
    const main = mainRefs.get(`refs/heads/${branch}`)
    if (main === fork) continue
    const { commits, more } = commitsOf(gitDir, fork, main, listed)
    branches.push({ branch, fork, main, commits, more })
  }
  return branches
}

/** `refs/heads/NAME` → commit, as the fork's git wrote them (loose references only). */
function looseBranches(gitDir: string): Map<string, string> {
  const found = new Map<string, string>()
  const heads = path.join(gitDir, 'refs', 'heads')
  if (!isFolder(path.join(gitDir, 'refs')) || !isFolder(heads)) return found
  const visit = (folder: string, prefix: string, depth: number): void => {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (found.size >= MAX_BRANCHES) return
      const name = `${prefix}${entry.name}`
      // A Dirent describes the entry itself: a link is neither a folder nor a file here.
      if (entry.isDirectory() && depth < 10)
        visit(path.join(folder, entry.name), `${name}/`, depth + 1)
      else if (entry.isFile() && isReferenceName(`refs/heads/${name}`)) {
        const value = readSmallFile(path.join(folder, entry.name), MAX_REFERENCE_BYTES)
        const id = value?.toString('utf8').trim()
        if (id !== undefined && OBJECT_ID.test(id)) found.set(name, id)
      }
    }
  }
  visit(heads, '', 0)
  return found
}

/**
 * The fork's commits from `tip` along first parents, until one the fork did not write, the
 * user's repository's value of the branch, or one already listed.
 */
function commitsOf(
  gitDir: string,
  tip: string,
  stop: string | undefined,
  listed: Set<string>,
): { commits: { id: string; subject: string }[]; more: boolean } {
  const commits: { id: string; subject: string }[] = []
  let id: string | undefined = tip
  while (id !== undefined && id !== stop && !listed.has(id)) {
    if (commits.length >= MAX_COMMITS_PER_BRANCH) return { commits, more: true }
    const commit = readCommit(gitDir, id)
    // Not written in the fork (the user's repository has it), or packed: the walk ends.
    if (commit === undefined) return { commits, more: false }
    commits.push({ id, subject: commit.subject })
    listed.add(id)
    id = commit.parent
  }
  return { commits, more: false }
}

/** A loose commit object of the fork: its first parent and subject. */
function readCommit(gitDir: string, id: string): { parent?: string; subject: string } | undefined {
  const objects = path.join(gitDir, 'objects')
  const folder = path.join(objects, id.slice(0, 2))
  if (!isFolder(objects) || !isFolder(folder)) return undefined
  const compressed = readSmallFile(path.join(folder, id.slice(2)), MAX_OBJECT_BYTES)
  if (compressed === undefined) return undefined
  let text: string
  try {
    text = zlib.inflateSync(compressed, { maxOutputLength: MAX_OBJECT_BYTES }).toString('utf8')
  } catch {
    return undefined
  }
  const header = text.indexOf('\0')
  if (!text.startsWith('commit ') || header < 0) return undefined
  const body = text.slice(header + 1)
  const end = body.indexOf('\n\n')
  const headers = end < 0 ? body : body.slice(0, end)
  const parent = /^parent ([0-9a-f]{40}|[0-9a-f]{64})$/m.exec(headers)?.[1]
  const message = end < 0 ? '' : body.slice(end + 2)
  const firstLine = message.split('\n', 1)[0] ?? ''
  // eslint-disable-next-line no-control-regex -- a subject a program wrote reaches a terminal
  const subject = firstLine.replace(/[\u0000-\u001f\u007f]/g, ' ').trim()
  return {
    ...(parent === undefined ? {} : { parent }),
    subject:
      subject.length > MAX_SUBJECT_CHARS ? `${subject.slice(0, MAX_SUBJECT_CHARS)}…` : subject,
  }
}

function isFolder(folder: string): boolean {
  try {
    return fs.lstatSync(folder).isDirectory()
  } catch {
    return false
  }
}

/** A regular file's bytes, when it is one and no larger than `maxBytes`; never through a link. */
function readSmallFile(file: string, maxBytes: number): Buffer | undefined {
  let descriptor: number
  try {
    // O_NONBLOCK: a FIFO planted there opens without waiting, and is then refused below.
    descriptor = fs.openSync(
      file,
      fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK,
    )
  } catch {
    return undefined
  }
  try {
    const stat = fs.fstatSync(descriptor)
    if (!stat.isFile() || stat.size > maxBytes) return undefined
    const buffer = Buffer.alloc(stat.size)
    const read = fs.readSync(descriptor, buffer, 0, stat.size, 0)
    return buffer.subarray(0, read)
  } catch {
    return undefined
  } finally {
    fs.closeSync(descriptor)
  }
}

/**
 * What a merge into `into` says of the fork's commits, if it made any: which stayed behind, and
 * how to commit their files, which the merge did bring.
 */
export function describeForkGitCommits(
  branches: readonly ForkBranchCommits[],
  into: string,
): string | undefined {
  if (branches.length === 0) return undefined
  const short = (id: string) => id.slice(0, 7)
  const each = branches.map((branch) => {
    const count = branch.commits.length
    const listed = branch.commits.map((commit) => JSON.stringify(commit.subject)).join(', ')
    const commits =
      count === 0
        ? `${branch.branch} moved to ${short(branch.fork)}`
        : `${count}${branch.more ? '+' : ''} commit${count === 1 && !branch.more ? '' : 's'} on ${branch.branch} (${listed}${branch.more ? ', …' : ''})`
    const where =
      branch.main === undefined
        ? 'new in the fork'
        : `your repository's ${branch.branch} is at ${short(branch.main)}`
    return `${commits}, ${where}`
  })
  const target = into === 'main' ? 'main' : `fork ${into}`
  return `Note: git commits made in the fork were not merged (a merge brings a fork's files into ${target}, never what git wrote in the fork's .git, and the fork's .git is gone with it): ${each.join('; ')}. Their changes are in the files of ${target} now, uncommitted: look with git status and git diff, then commit them there with git add -A && git commit -m MESSAGE (the fork's commits come back as one change; their messages are above).`
}
