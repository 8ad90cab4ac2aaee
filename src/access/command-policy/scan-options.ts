/**
 * @module access/command-policy/scan-options
 * Reads a program's arguments the way GNU getopt does, so that `rm -fr`, `rm -r -f`,
 * `rm --rec --force`, `rm / -rf` and `rm -rf -- /` all come out the same: short options
 * bundled, long options by any unambiguous prefix, options after operands (unless `--` or
 * `stopAtOperand`), values attached or in the next word.
 */
import { isOneWord, literalWord, type ShellWord } from './shell-syntax.ts'

/** One option a program accepts. */
export interface OptionDefinition {
  /** The name the scan reports, usually the long name. */
  readonly name: string
  /** The one-letter spelling, without the dash. */
  readonly short?: string
  /** The long spelling, without the dashes. */
  readonly long?: string
  /** `required`: the value is attached or is the next word; `attached`: only `-xV`/`--x=V`. */
  readonly value?: 'required' | 'attached'
}

/** What a scan found. */
export interface OptionScan {
  readonly options: readonly { readonly name: string; readonly value: ShellWord | undefined }[]
  readonly operands: readonly ShellWord[]
  /** Words only known at run time where an option could stand (they may be any option). */
  readonly dynamic: readonly ShellWord[]
  /** Options the definitions do not know, as written. */
  readonly unknown: readonly string[]
  /** With `stopAtOperand`: the index of the first operand (the command a wrapper runs). */
  readonly end: number
}

/** How to scan. */
export interface ScanSettings {
  readonly start?: number
  /** Stop at the first operand, as wrappers and POSIX programs do. */
  readonly stopAtOperand?: boolean
  /** Accept `-5` as an option (`nice -5`). */
  readonly numericOptions?: boolean
  /**
   * Know a long option only by its full name. An abbreviation (`--out` for `--output`) is then
   * unknown: the program may resolve it against options the definitions do not list.
   */
  readonly exactLong?: boolean
  /**
   * Count a glob or brace expansion that could start with `-` among `dynamic` (see
   * {@link couldBecomeOption}), not among the operands.
   */
  readonly globsMayBeOptions?: boolean
}

/** Scans `words` from `settings.start` (see the module comment). */
export function scanOptions(
  words: readonly ShellWord[],
  definitions: readonly OptionDefinition[],
  settings: ScanSettings = {},
): OptionScan {
  const scan = { options: [], operands: [], dynamic: [], unknown: [] } as {
    options: { name: string; value: ShellWord | undefined }[]
    operands: ShellWord[]
    dynamic: ShellWord[]
    unknown: string[]
  }
  let index = settings.start ?? 0
  let afterDoubleDash = false
  for (; index < words.length; index += 1) {
    const word = words[index] as ShellWord
    const text = word.value
    if (afterDoubleDash) {
      scan.operands.push(word)
      continue
    }
    const expands = text === undefined || (settings.globsMayBeOptions === true && word.glob)
    if (expands && couldBecomeOption(word)) {
      scan.dynamic.push(word)
      if (settings.stopAtOperand === true) break
      scan.operands.push(word)
      continue
    }
    if (text === undefined) {
      if (settings.stopAtOperand === true) break
      scan.operands.push(word)
      continue
    }
    if (text === '--') {
      afterDoubleDash = true
      if (settings.stopAtOperand === true) return { ...scan, end: index + 1 }
      continue
    }
    if (!text.startsWith('-') || text === '-') {
      if (settings.stopAtOperand === true) break
      scan.operands.push(word)
      continue
    }
    if (settings.numericOptions === true && /^-\d+$/.test(text)) {
      scan.options.push({ name: text, value: undefined })
      continue
    }
    const consumed = text.startsWith('--')
      ? readLong(text.slice(2), words[index + 1], definitions, scan, settings.exactLong === true)
      : readShort(text.slice(1), words[index + 1], definitions, scan)
    index += consumed
  }
  return { ...scan, end: index }
}

type Found = {
  options: { name: string; value: ShellWord | undefined }[]
  unknown: string[]
  dynamic: ShellWord[]
}

/**
 * Records `next` as the value of `name`. A value the shell may make none or several words of
 * (`sort -k {1,--output=x}`, `nice -n $n` with `n='1 rm -rf .'`) leaves the words after it out
 * of place: the program may read one of them as an option, so it counts among `dynamic`.
 */
function takeNext(name: string, next: ShellWord | undefined, found: Found): number {
  found.options.push({ name, value: next })
  if (next === undefined) return 0
  if (!isOneWord(next)) found.dynamic.push(next)
  return 1
}

/** Reads `--name[=value]`; answers how many following words it consumed. */
function readLong(
  body: string,
  next: ShellWord | undefined,
  definitions: readonly OptionDefinition[],
  found: Found,
  exactOnly: boolean,
): number {
  const equals = body.indexOf('=')
  const name = equals === -1 ? body : body.slice(0, equals)
  const exact = definitions.find((definition) => definition.long === name)
  const prefixed = definitions.filter((definition) => definition.long?.startsWith(name) === true)
  const definition = exact ?? (prefixed.length === 1 && !exactOnly ? prefixed[0] : undefined)
  if (definition === undefined || name === '') {
    found.unknown.push(`--${body}`)
    return 0
  }
  if (equals !== -1) {
    found.options.push({ name: definition.name, value: literalWord(body.slice(equals + 1)) })
    return 0
  }
  if (definition.value === 'required') return takeNext(definition.name, next, found)
  found.options.push({ name: definition.name, value: undefined })
  return 0
}

/** Reads a bundle of short options; answers how many following words it consumed. */
function readShort(
  bundle: string,
  next: ShellWord | undefined,
  definitions: readonly OptionDefinition[],
  found: Found,
): number {
  for (let position = 0; position < bundle.length; position += 1) {
    const letter = bundle[position] as string
    const definition = definitions.find((candidate) => candidate.short === letter)
    if (definition === undefined) {
      found.unknown.push(`-${letter}`)
      continue
    }
    const rest = bundle.slice(position + 1)
    if (definition.value === undefined || (definition.value === 'attached' && rest === '')) {
      found.options.push({ name: definition.name, value: undefined })
      continue
    }
    if (rest !== '') {
      found.options.push({ name: definition.name, value: literalWord(rest) })
      return 0
    }
    return takeNext(definition.name, next, found)
  }
  return 0
}

/** True when the scan found the option `name`. */
export function hasOption(scan: OptionScan, name: string): boolean {
  return scan.options.some((option) => option.name === name)
}

/** Characters that start a glob or brace expansion when unquoted. */
const EXPANDING_START = /^[*?[{]/

/**
 * True when the shell could turn `word` into an option: it is only known at run time (`$X`
 * could be `--output=f`), or it is a glob or brace expansion whose first character is not
 * fixed (`*` matches a file named `-rf`, `{--pre=x,a}` makes `--pre=x`). A process
 * substitution expands to a file name, never an option.
 */
export function couldBecomeOption(word: ShellWord): boolean {
  if (word.value === undefined) return word.operandOnly !== true
  return word.glob && (EXPANDING_START.test(word.pattern) || word.pattern.startsWith('-'))
}
