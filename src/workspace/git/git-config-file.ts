/**
 * @module workspace/git/git-config-file
 * Reads one git configuration file as git itself parses it (quoting, escapes, continuations),
 * without following its includes and without running anything: `git config --file` only reads.
 * The user's repository configuration is never written here.
 */
import { spawn } from 'node:child_process'

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
export function readGitConfigFile(hostPath: string): Promise<GitConfigEntry[]> {
  return new Promise((resolve) => {
    const child = spawn(
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
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: READ_TIMEOUT_MS,
      },
    )
    const chunks: Buffer[] = []
    let bytes = 0
    child.stdout.on('data', (chunk: Buffer) => {
      bytes += chunk.byteLength
      if (bytes > MAX_CONFIG_BYTES) child.kill('SIGKILL')
      else chunks.push(chunk)
    })
    child.once('error', () => resolve([]))
    child.once('close', (status) => {
      if (status !== 0 || bytes > MAX_CONFIG_BYTES) return resolve([])
      resolve(parseListing(Buffer.concat(chunks).toString('utf8')))
    })
  })
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
