/**
 * @module workspace/git/git-config-file
 * Reads one git configuration file as git itself parses it (quoting, escapes, continuations),
 * without following its includes and without running anything: `git config --file` only reads.
 * The user's repository configuration is never written here.
 */
import { ByteCapture, startBounded } from '../../util/bounded-spawn.ts'

/** One `key = value` of a configuration file; `value` is undefined for a bare boolean key. */
export interface GitConfigEntry {
  /** As git prints it: section and name in lower case, a subsection as written. */
  readonly key: string
  readonly value: string | undefined
}

/** A configuration larger than this is not read (git's own files are a few kilobytes). */
const MAX_CONFIG_BYTES = 1024 * 1024
const READ_TIMEOUT_MS = 10_000

/**
 * The entries of the configuration file at `hostPath`, in file order; none when it is missing
 * or git cannot parse it (git would then refuse to run in that repository anyway).
 */
export async function readGitConfigFile(hostPath: string): Promise<GitConfigEntry[]> {
  return (await parseGitConfigFile(hostPath)) ?? []
}

/**
 * The entries of the configuration file at `hostPath`, in file order; undefined when it is
 * missing, larger than git's own files are, or git cannot parse it.
 */
export async function parseGitConfigFile(hostPath: string): Promise<GitConfigEntry[] | undefined> {
  const listing = new ByteCapture(MAX_CONFIG_BYTES)
  const exit = await startBounded(
    'git',
    ['config', '--file', hostPath, '--list', '--null', '--no-includes'],
    {
      cwd: '/',
      env: {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        LC_ALL: 'C',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
      },
      noStdin: true,
      stdout: listing,
      // Its messages are not used: an unreadable file counts as none.
      stderr: { push: () => undefined },
      timeoutMs: READ_TIMEOUT_MS,
    },
  ).exited
  if (exit.exitCode !== 0 || exit.overflowed) return undefined
  return parseListing(listing.bytes().toString('utf8'))
}

/** `key\nvalue\0` per entry; a bare boolean key is `key\0`. */
export function parseListing(listing: string): GitConfigEntry[] {
  return listing
    .split('\0')
    .filter((record) => record !== '')
    .map((record) => {
      const newline = record.indexOf('\n')
      return newline === -1
        ? { key: record, value: undefined }
        : { key: record.slice(0, newline), value: record.slice(newline + 1) }
    })
}
