/**
 * @module access/command-policy/resolve-command
 * Sees through the programs that only run another program (`env`, `nohup`, `timeout 5`, `nice`,
 * `time`, `command`, `builtin`, `exec`, `xargs`, `sudo`, …) to the command they run, so that
 * `nohup timeout 5 env X=1 rm -rf /` is judged as `rm -rf /`.
 */
import { posix } from 'node:path'
import type { CommandFinding } from './command-judgement.ts'
import { hasOption, scanOptions, type OptionScan } from './scan-options.ts'
import {
  dynamicWord,
  isOneWord,
  literalWord,
  type Assignment,
  type ShellWord,
  type SimpleCommand,
} from './shell-syntax.ts'
import { WRAPPERS, type WrapperDefinition } from './wrappers.ts'

/** The command that actually runs, after the wrappers. */
export interface ResolvedCommand {
  readonly source: SimpleCommand
  /** The program's file name (`sudo` for `/usr/bin/sudo`). */
  readonly name: string
  /** True when the name is bare or in a system bin folder (not `./cat`). */
  readonly systemProgram: boolean
  readonly args: readonly ShellWord[]
  /** The wrappers seen through, outermost first. */
  readonly wrappers: readonly string[]
  /** Assignments before the command and those given to `env` or `sudo`. */
  readonly assignments: readonly Assignment[]
  /** What the wrappers themselves do that keeps the command out of `allow` (`time -o f`). */
  readonly wrapperFindings: readonly CommandFinding[]
  /** A wrapper runs the command in another folder (`env -C dir`). */
  readonly changesDirectory: boolean
}

/** The outcome: a command, nothing to run, or a reason the command cannot be told. */
export type Resolution =
  | { readonly type: 'resolved'; readonly command: ResolvedCommand }
  | { readonly type: 'none' }
  | { readonly type: 'unclear'; readonly finding: CommandFinding }

const SYSTEM_BIN_FOLDERS = new Set([
  '/bin',
  '/sbin',
  '/usr/bin',
  '/usr/sbin',
  '/usr/local/bin',
  '/usr/local/sbin',
])

const ASSIGNMENT_WORD = /^([A-Za-z_][A-Za-z0-9_]*)=/

/** Resolves `command` (see the module comment). */
export function resolveCommand(command: SimpleCommand): Resolution {
  let words = command.words
  const wrappers: string[] = []
  const assignments = [...command.assignments]
  const wrapperFindings: CommandFinding[] = []
  const moved = { changesDirectory: false }
  /** The last privileged wrapper seen: an unclear command under it is still privileged. */
  let privileged: ResolvedCommand | undefined
  for (;;) {
    const nameWord = words[0]
    if (nameWord === undefined) return { type: 'none' }
    if (nameWord.value === undefined || nameWord.glob) {
      if (privileged !== undefined) return { type: 'resolved', command: privileged }
      return {
        type: 'unclear',
        finding: {
          verdict: 'ask',
          rule: 'dynamic-command',
          reason: `the program to run (${nameWord.text}) is only known when the command runs; write the program's name literally`,
        },
      }
    }
    const path = nameWord.value
    const name = path.slice(path.lastIndexOf('/') + 1)
    const systemProgram = isSystemProgram(path)
    const resolved = {
      source: command,
      name,
      systemProgram,
      args: words.slice(1),
      wrappers,
      wrapperFindings,
      changesDirectory: moved.changesDirectory,
    }
    const wrapper = systemProgram ? WRAPPERS[name] : undefined
    if (wrapper === undefined) return { type: 'resolved', command: { ...resolved, assignments } }
    const peeled = peel(wrapper, name, words, assignments, wrapperFindings, moved)
    if (peeled.type === 'unclear')
      return privileged === undefined ? peeled : { type: 'resolved', command: privileged }
    if (wrapper.privileged === true)
      privileged = { ...resolved, wrappers: [...wrappers], assignments }
    if (peeled.type === 'self') return { type: 'resolved', command: { ...resolved, assignments } }
    wrappers.push(name)
    words = peeled.words
  }
}

/** True for `cat`, `/bin/cat`, `/usr/bin/cat`; false for `./cat` or `tools/cat`. */
export function isSystemProgram(path: string): boolean {
  const slash = path.lastIndexOf('/')
  return slash === -1 || SYSTEM_BIN_FOLDERS.has(posix.normalize(path.slice(0, slash)))
}

type Peeled =
  | { readonly type: 'inner'; readonly words: readonly ShellWord[] }
  | { readonly type: 'self' }
  | { readonly type: 'unclear'; readonly finding: CommandFinding }

function peel(
  wrapper: WrapperDefinition,
  name: string,
  words: readonly ShellWord[],
  assignments: Assignment[],
  findings: CommandFinding[],
  moved: { changesDirectory: boolean },
): Peeled {
  const scan = scanOptions(words, wrapper.options, {
    start: 1,
    stopAtOperand: true,
    numericOptions: wrapper.numericOptions === true,
  })
  // coreutils' env reads a `-` where the command would start as `-i`.
  const dashClears = wrapper.loneDashClears === true && words[scan.end]?.value === '-'
  findings.push(...wrapperNotes(wrapper, name, scan, dashClears))
  if (wrapper.directoryOptions?.some((option) => hasOption(scan, option)) === true)
    moved.changesDirectory = true
  for (const option of scan.options) {
    if (!wrapper.variableOptions?.includes(option.name)) continue
    const variable = option.value?.value
    assignments.push({ name: variable ?? `(${option.value?.text ?? '?'})`, value: undefined })
  }
  const unknown =
    scan.unknown[0] ?? wrapper.unclearOptions?.find((option) => hasOption(scan, option))
  if (unknown !== undefined && wrapper.privileged !== true) {
    return unclear(`${name} ${unknown} is an option the policy does not read`)
  }
  if (unknown !== undefined || wrapper.stopOptions?.some((option) => hasOption(scan, option))) {
    return { type: 'self' }
  }
  // Where the command starts is counted in words: a value, a duration or an assignment the
  // shell may make none or several words of (`nice -n {1,touch,x} git log` runs `touch x git
  // log`) puts it elsewhere.
  const splitting = scan.options.find(({ value }) => value !== undefined && !isOneWord(value))
  // A privileged wrapper is judged as itself whatever it runs.
  const cannotTell = (word: ShellWord): Peeled =>
    wrapper.privileged === true ? { type: 'self' } : notOneWord(name, word)
  if (splitting?.value !== undefined) return cannotTell(splitting.value)
  let index = scan.end + (dashClears ? 1 : 0)
  while (wrapper.assignments === true && index < words.length) {
    const word = words[index] as ShellWord
    const variable = ASSIGNMENT_WORD.exec(word.staticPrefix)?.[1]
    if (variable === undefined) break
    if (!isOneWord(word)) return cannotTell(word)
    const rest = (word.value ?? word.text).slice(variable.length + 1)
    const value = word.value === undefined ? dynamicWord(rest) : literalWord(rest)
    assignments.push({ name: variable, value })
    index += 1
  }
  const operands = words.slice(index, index + (wrapper.leadingOperands ?? 0))
  const split = operands.find((word) => !isOneWord(word))
  if (split !== undefined) return cannotTell(split)
  index += operands.length
  const inner = words.slice(index)
  if (inner.length > 0) return { type: 'inner', words: wrapper.adjust?.(inner, scan) ?? inner }
  const fallback = wrapper.defaultCommand
  return fallback === undefined ? { type: 'self' } : { type: 'inner', words: [fallback] }
}

function notOneWord(name: string, word: ShellWord): Peeled {
  return {
    type: 'unclear',
    finding: {
      verdict: 'ask',
      rule: 'unclear-command',
      reason: `${name}: the shell may make several words of ${word.text}, or none, so the policy cannot tell which program ${name} runs; quote it ("$x") or write it out`,
    },
  }
}

function unclear(reason: string): Peeled {
  return {
    type: 'unclear',
    finding: {
      verdict: 'ask',
      rule: 'unclear-command',
      reason: `${reason}, so it cannot tell which program runs; drop the option or run the program directly`,
    },
  }
}

/** What a wrapper does by itself that keeps its command out of `allow`. */
function wrapperNotes(
  wrapper: WrapperDefinition,
  name: string,
  scan: OptionScan,
  dashClears: boolean,
): CommandFinding[] {
  const jail = (why: string): CommandFinding => ({
    verdict: 'jail',
    rule: 'confined',
    reason: `${why}; the command runs confined`,
  })
  const notes: CommandFinding[] = []
  if (wrapper.notReadOnly !== undefined) notes.push(jail(wrapper.notReadOnly))
  const writing = wrapper.writingOptions?.find((option) => hasOption(scan, option))
  if (writing !== undefined)
    notes.push(jail(`${name} --${writing} writes a file or leaves a process behind`))
  const renaming = wrapper.renamingOptions?.find((option) => hasOption(scan, option))
  if (renaming !== undefined) {
    // Still judged as what the words say too: `exec -a x sudo id` stays denied.
    notes.push({
      verdict: 'ask',
      rule: 'unclear-command',
      reason: `${name} -${renaming} gives the program another name to see as its own, and programs such as git, busybox and bash run another command or read other code by that name, so the policy cannot tell what runs; run the program by its own name`,
    })
  }
  const option = wrapper.clearingOptions?.find((candidate) => hasOption(scan, candidate))
  const clearing =
    option === undefined
      ? dashClears
        ? '-'
        : undefined
      : `${option.length === 1 ? '-' : '--'}${option}`
  if (clearing !== undefined) {
    notes.push({
      verdict: 'jail',
      rule: 'environment',
      reason: `${name} ${clearing} removes the environment the jail set for the command; it runs confined`,
    })
  }
  return notes
}
