/**
 * @module access/command-policy/shell-invocation
 * How a shell was asked to get its program: a `-c` string, a script file, or standard input.
 * Options are read as bash reads them: bundled (`-xc`), with `+` too, `-o`/`-O` taking a value,
 * all of them before the first operand.
 */
import { isOneWord, type ShellWord } from './shell-syntax.ts'

/** Where a shell's program comes from. */
export type ShellInvocation =
  | { readonly type: 'string'; readonly script: ShellWord }
  | { readonly type: 'file'; readonly file: ShellWord }
  | { readonly type: 'stdin' }
  /**
   * A word only known at run time, or one the shell makes several words of (`{-c,'code'}`),
   * stands where an option or the program could.
   */
  | { readonly type: 'unclear'; readonly word: ShellWord }

/** Long options that take the next word as their value. */
const LONG_WITH_VALUE = new Set(['--rcfile', '--init-file'])
/** Short options that take the next word as their value. */
const SHORT_WITH_VALUE = new Set(['o', 'O'])

/**
 * Reads a shell's arguments (without its name).
 *
 * @example
 * readShellInvocation(words('-lc', 'make test')) // { type: 'string', script: make test }
 */
export function readShellInvocation(args: readonly ShellWord[]): ShellInvocation {
  let commandString = false
  let fromStdin = false
  for (let index = 0; index < args.length; index += 1) {
    const word = args[index] as ShellWord
    const text = word.value
    if (text === undefined || !isOneWord(word)) return { type: 'unclear', word }
    if (text === '--' || text === '-') {
      return operand(args[index + 1], commandString, fromStdin)
    }
    if (text.startsWith('--')) {
      if (LONG_WITH_VALUE.has(text)) index += 1
      continue
    }
    if ((text.startsWith('-') || text.startsWith('+')) && text.length > 1) {
      for (const letter of text.slice(1)) {
        if (letter === 'c' && text.startsWith('-')) commandString = true
        if (letter === 's') fromStdin = true
        if (SHORT_WITH_VALUE.has(letter)) index += 1
      }
      continue
    }
    return operand(word, commandString, fromStdin)
  }
  return { type: 'stdin' }
}

/**
 * The options given to a shell before its program, as `name` for `-o name`/`-O name` (and
 * `posix` for `--posix`); undefined for one only known at run time.
 *
 * @example
 * shellOptions(words('-O', 'extglob', '-c', 'ls')) // ['extglob']
 */
export function shellOptions(args: readonly ShellWord[]): Array<string | undefined> {
  const options: Array<string | undefined> = []
  for (let index = 0; index < args.length; index += 1) {
    const word = args[index] as ShellWord
    const text = word.value
    if (text === undefined || !isOneWord(word)) return [...options, undefined]
    if (text === '--' || text === '-') return options
    if (text.startsWith('--')) {
      if (text === '--posix') options.push('posix')
      if (LONG_WITH_VALUE.has(text)) index += 1
      continue
    }
    if (!(text.startsWith('-') || text.startsWith('+')) || text.length === 1) return options
    for (const letter of text.slice(1)) {
      if (!SHORT_WITH_VALUE.has(letter)) continue
      index += 1
      if (text.startsWith('-')) options.push(args[index]?.value)
    }
  }
  return options
}

function operand(
  word: ShellWord | undefined,
  commandString: boolean,
  fromStdin: boolean,
): ShellInvocation {
  if (word === undefined || (fromStdin && !commandString)) return { type: 'stdin' }
  return commandString ? { type: 'string', script: word } : { type: 'file', file: word }
}
