/**
 * @module access/command-policy/wrappers
 * The programs that run another program given in their arguments, with the options they take,
 * so that the policy can find where the inner command starts.
 */
import type { OptionDefinition, OptionScan } from './scan-options.ts'
import { dynamicWord, literalWord, type ShellWord } from './shell-syntax.ts'

/** How to find the inner command of one wrapper. */
export interface WrapperDefinition {
  readonly options: readonly OptionDefinition[]
  /** Accepts `-5` as an option (`nice -5 make`). */
  readonly numericOptions?: boolean
  /** `NAME=value` words before the command are assignments (`env`, `sudo`). */
  readonly assignments?: boolean
  /** Operands before the command (`timeout 5 …`). */
  readonly leadingOperands?: number
  /** Runs the inner command with more privilege than the caller has. */
  readonly privileged?: boolean
  /** Options with which the wrapper runs no command (`command -v x`): judged as itself. */
  readonly stopOptions?: readonly string[]
  /** Options that hide the command in a way the policy does not follow (`env -S '…'`). */
  readonly unclearOptions?: readonly string[]
  /** What runs when no command is given (`xargs` alone runs `echo`). */
  readonly defaultCommand?: ShellWord
  /** Changes the inner command's words (`xargs` adds arguments read from standard input). */
  readonly adjust?: (inner: readonly ShellWord[], scan: OptionScan) => ShellWord[]
  /**
   * Why the wrapper itself keeps the command out of `allow`, whatever it runs (`nohup` may
   * write `nohup.out`, `busybox` applets take other options than the programs they mimic).
   */
  readonly notReadOnly?: string
  /** Options that make the wrapper write a file, or leave a process behind, by name. */
  readonly writingOptions?: readonly string[]
  /** Options that remove the inner command's environment (`env -i`). */
  readonly clearingOptions?: readonly string[]
  /** A lone `-` before the command removes its environment too (`env - cmd` is `env -i cmd`). */
  readonly loneDashClears?: boolean
  /** Options whose value names a variable set or unset for the inner command (`env -u X`). */
  readonly variableOptions?: readonly string[]
  /** Options that run the inner command in another folder (`env -C dir`). */
  readonly directoryOptions?: readonly string[]
  /**
   * Options that give the inner program another name to see as its own (`exec -a NAME`,
   * `exec -l`): programs that act by that name do something else than the words say (git named
   * `git-clean` runs `git clean`, a busybox `ls` named `rm` removes, bash named `-bash` reads
   * the profile in its home, named `sh` reads code in POSIX mode), so what runs is unknown.
   */
  readonly renamingOptions?: readonly string[]
}

const flag = (name: string, short?: string): OptionDefinition =>
  short === undefined ? { name, long: name } : { name, short, long: name }
const valued = (name: string, short?: string): OptionDefinition => ({
  ...flag(name, short),
  value: 'required',
})
const shortFlag = (letter: string): OptionDefinition => ({ name: letter, short: letter })
const shortValued = (letter: string): OptionDefinition => ({
  name: letter,
  short: letter,
  value: 'required',
})

/**
 * `xargs` runs its command with more arguments, or with `{}` replaced, from standard input. Of
 * several `-I`/`-i`/`--replace`, the last counts (xargs reads them in order); a string to
 * replace only known at run time (`-I "$t"`) may be in any argument, so every one after the
 * program's name is. A later `-L`, `-l` or `-n` (but `-n 1`) turns replacing off again and
 * xargs adds arguments instead (`xargs -I Y -n 2 git log` runs `git log --output=f`).
 */
function xargsArguments(inner: readonly ShellWord[], scan: OptionScan): ShellWord[] {
  let replace: OptionScan['options'][number] | undefined
  let replacing = false
  for (const option of scan.options) {
    if (option.name === 'replace') [replace, replacing] = [option, true]
    else if (option.name === 'L' || option.name === 'max-lines') replacing = false
    else if (option.name === 'max-args' && option.value?.value !== '1') replacing = false
  }
  const replaced = replace === undefined ? [...inner] : replaceIn(inner, replace.value)
  return replacing ? replaced : [...replaced, dynamicWord('(arguments read from standard input)')]
}

/** The words after xargs replaces its string (`{}` unless given) with what it reads. */
function replaceIn(inner: readonly ShellWord[], given: ShellWord | undefined): ShellWord[] {
  if (given !== undefined && given.value === undefined) {
    const [program, ...args] = inner
    return program === undefined ? [] : [program, ...args.map((word) => dynamicWord(word.text, ''))]
  }
  const token = given?.value ?? '{}'
  return inner.map((word) => {
    const text = word.value ?? word.staticPrefix
    const at = text.indexOf(token)
    return at === -1 ? word : dynamicWord(word.text, text.slice(0, at))
  })
}

const SUDO_OPTIONS: readonly OptionDefinition[] = [
  ...['askpass', 'background', 'preserve-env', 'set-home', 'login', 'non-interactive'].map((name) =>
    flag(name),
  ),
  ...['A', 'b', 'E', 'e', 'H', 'i', 'K', 'k', 'l', 'n', 'P', 'S', 's', 'V', 'v'].map(shortFlag),
  ...['user', 'group', 'chdir', 'prompt', 'host', 'role', 'type', 'close-from', 'other-user'].map(
    (name) => valued(name),
  ),
  ...['u', 'g', 'D', 'p', 'h', 'r', 't', 'C', 'U', 'T'].map(shortValued),
]

/** Every wrapper the policy sees through, by program name. */
export const WRAPPERS: Readonly<Record<string, WrapperDefinition>> = {
  env: {
    options: [
      flag('ignore-environment', 'i'),
      flag('null', '0'),
      valued('unset', 'u'),
      valued('chdir', 'C'),
      valued('split-string', 'S'),
      flag('debug', 'v'),
      flag('list-signal-handling'),
      { name: 'block-signal', long: 'block-signal', value: 'attached' },
      { name: 'default-signal', long: 'default-signal', value: 'attached' },
      { name: 'ignore-signal', long: 'ignore-signal', value: 'attached' },
    ],
    assignments: true,
    unclearOptions: ['split-string'],
    clearingOptions: ['ignore-environment'],
    loneDashClears: true,
    variableOptions: ['unset'],
    directoryOptions: ['chdir'],
  },
  nohup: { options: [], notReadOnly: 'nohup writes nohup.out when its output is a terminal' },
  timeout: {
    options: [
      valued('signal', 's'),
      valued('kill-after', 'k'),
      flag('verbose', 'v'),
      flag('preserve-status'),
      flag('foreground'),
    ],
    leadingOperands: 1,
  },
  nice: { options: [valued('adjustment', 'n')], numericOptions: true },
  ionice: {
    options: [
      valued('class', 'c'),
      valued('classdata', 'n'),
      valued('pid', 'p'),
      flag('ignore', 't'),
    ],
    stopOptions: ['pid'],
  },
  stdbuf: { options: [valued('input', 'i'), valued('output', 'o'), valued('error', 'e')] },
  setsid: {
    options: [flag('ctty', 'c'), flag('fork', 'f'), flag('wait', 'w')],
    writingOptions: ['fork'],
  },
  time: {
    options: [
      flag('portability', 'p'),
      valued('format', 'f'),
      valued('output', 'o'),
      flag('append', 'a'),
      flag('verbose', 'v'),
      flag('quiet', 'q'),
    ],
    writingOptions: ['output'],
  },
  command: { options: [shortFlag('p'), shortFlag('v'), shortFlag('V')], stopOptions: ['v', 'V'] },
  builtin: { options: [] },
  exec: {
    options: [shortValued('a'), shortFlag('c'), shortFlag('l')],
    clearingOptions: ['c'],
    renamingOptions: ['a', 'l'],
  },
  coproc: { options: [], notReadOnly: 'coproc runs the command in the background' },
  busybox: {
    options: [],
    notReadOnly: 'busybox applets read other options than the programs they stand for',
  },
  xargs: {
    options: [
      flag('null', '0'),
      valued('arg-file', 'a'),
      valued('delimiter', 'd'),
      shortValued('E'),
      { name: 'eof', short: 'e', long: 'eof', value: 'attached' },
      { name: 'replace', short: 'I', value: 'required' },
      { name: 'replace', short: 'i', long: 'replace', value: 'attached' },
      shortValued('L'),
      { name: 'max-lines', short: 'l', long: 'max-lines', value: 'attached' },
      valued('max-args', 'n'),
      flag('open-tty', 'o'),
      valued('max-procs', 'P'),
      flag('interactive', 'p'),
      valued('process-slot-var'),
      flag('no-run-if-empty', 'r'),
      valued('max-chars', 's'),
      flag('show-limits'),
      flag('verbose', 't'),
      flag('exit', 'x'),
    ],
    defaultCommand: literalWord('echo'),
    adjust: xargsArguments,
    variableOptions: ['process-slot-var'],
  },
  sudo: { options: SUDO_OPTIONS, assignments: true, privileged: true },
  doas: {
    options: [shortValued('u'), shortValued('C'), shortFlag('n'), shortFlag('s'), shortFlag('L')],
    privileged: true,
  },
  pkexec: {
    options: [valued('user'), flag('keep-cwd'), flag('disable-internal-agent')],
    privileged: true,
  },
  run0: {
    options: [
      valued('user', 'u'),
      valued('group', 'g'),
      valued('chdir', 'D'),
      ...[
        'unit',
        'property',
        'description',
        'slice',
        'nice',
        'setenv',
        'machine',
        'background',
      ].map((name) => valued(name)),
      ...['no-ask-password', 'pty', 'pipe', 'via-shell'].map((name) => flag(name)),
    ],
    privileged: true,
  },
}
