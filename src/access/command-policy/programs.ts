/**
 * @module access/command-policy/programs
 * Families of programs several rules need to recognise.
 */

/** Shells whose `-c` string is parsed again and judged. */
export const SHELLS: ReadonlySet<string> = new Set([
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'mksh',
  'ash',
  'yash',
  'fish',
])

/** Files that are a process's own input stream, not a script on disk. */
export const STREAM_FILES = /^(-|\/dev\/stdin|\/dev\/fd\/\d+|\/proc\/[^/]+\/fd\/\d+)$/

/** Programs that fetch from the network. */
export const DOWNLOADERS: ReadonlySet<string> = new Set([
  'curl',
  'wget',
  'wget2',
  'fetch',
  'aria2c',
  'http',
  'https',
  'xh',
  'lwp-request',
  'nc',
  'ncat',
  'netcat',
  'socat',
])

/**
 * Interpreters that run a program read from standard input when given no program, and the
 * options with which they take the program from the command line instead.
 */
export const INTERPRETERS: Readonly<Record<string, ReadonlySet<string>>> = {
  ...Object.fromEntries([...SHELLS].map((shell) => [shell, new Set(['-c'])])),
  python: new Set(['-c', '-m']),
  python2: new Set(['-c', '-m']),
  python3: new Set(['-c', '-m']),
  perl: new Set(['-e', '-E']),
  ruby: new Set(['-e']),
  node: new Set(['-e', '-p', '--eval', '--print']),
  nodejs: new Set(['-e', '-p', '--eval', '--print']),
  php: new Set(['-r']),
  lua: new Set(['-e']),
  tclsh: new Set([]),
  pwsh: new Set(['-c', '-Command', '-command']),
}
