/**
 * @module access/command-policy/rules/find
 * `find` only lists, unless its expression deletes (`-delete`: judged like `rm -r` of each
 * starting point), writes (`-fprint`) or runs a command (`-exec`, `-execdir`, `-ok`,
 * `-okdir`). It is `allow` only when every primary is on a closed list of tests, options and
 * actions that only list (findutils 4.9), and no starting point could expand to one. A command it runs is judged as if written alone, twice: with `{}` as each
 * starting point (find's first match is the starting point itself) and as a path only known
 * at run time; the worse verdict counts.
 */
import { mostSevere, type CommandFinding } from '../command-judgement.ts'
import { pathDanger } from '../dangerous-paths.ts'
import { resolveCommand } from '../resolve-command.ts'
import { couldBecomeOption } from '../scan-options.ts'
import { dynamicWord, isOneWord, literalWord, type ShellWord } from '../shell-syntax.ts'
import { quoted, type CommandRuleCheck, type RuleContext } from './rule.ts'
import type { ResolvedCommand } from '../resolve-command.ts'

/** Tests that narrow what `-delete` deletes to files matched by name or path. */
const NAME_TESTS = new Set([
  ...['-name', '-iname', '-path', '-ipath', '-wholename', '-iwholename', '-regex', '-iregex'],
  ...['-lname', '-ilname'],
])
const RUNS_COMMAND = new Set(['-exec', '-execdir', '-ok', '-okdir'])
/** Operators, options, tests and actions that only list, and take no value. */
const LISTING_FLAGS = new Set([
  ...['(', ')', '!', ',', '-not', '-a', '-and', '-o', '-or', '-daystart', '-follow', '-nowarn'],
  ...['-warn', '-depth', '-d', '-mount', '-noleaf', '-xdev', '-ignore_readdir_race'],
  ...['-noignore_readdir_race', '-empty', '-false', '-true', '-nouser', '-nogroup', '-readable'],
  ...['-writable', '-executable', '-print', '-print0', '-ls', '-prune', '-quit'],
])
/** Options and tests that only list, and take one value. */
const LISTING_WITH_VALUE = new Set([
  ...['-regextype', '-files0-from', '-maxdepth', '-mindepth', '-amin', '-anewer', '-atime'],
  ...['-cmin', '-cnewer', '-context', '-ctime', '-fstype', '-gid', '-group', '-ilname', '-iname'],
  ...['-inum', '-ipath', '-iwholename', '-iregex', '-links', '-lname', '-mmin', '-mtime', '-name'],
  ...['-newer', '-path', '-perm', '-regex', '-wholename', '-size', '-type', '-uid', '-used'],
  ...['-user', '-xtype', '-printf', '-samefile'],
])
/**
 * A brace expansion with an alternative that is empty or starts with `-` (in the word's pattern
 * quoted specials are escaped, and `""` leaves nothing): `{"",-delete}`, `{,}-delete`.
 */
const BRACE_MAKING_OPTION = /(^|[^\\])[{,][-,}]/
const NEWER_XY = /^-newer[aBcmt][aBcmt]$/
const WRITES_FILE = new Set(['-fprint', '-fprint0', '-fprintf', '-fls'])
/** Options before the starting points: `-H`, `-L`, `-P`, `-D debug`, `-O3`. */
const LEADING_OPTION = /^-([HLP]|D|O\d*)$/

export const checkFind: CommandRuleCheck = (command, context) => {
  if (command.name !== 'find') return []
  const args = command.args
  let index = 0
  while (LEADING_OPTION.test(args[index]?.value ?? '')) index += args[index]?.value === '-D' ? 2 : 1
  const starts: ShellWord[] = []
  const findings: CommandFinding[] = []
  for (; index < args.length; index += 1) {
    const word = args[index] as ShellWord
    if (word.value !== undefined && /^[-(!),]/.test(word.value)) break
    // A starting point that begins with `-` is read as an expression (`*` and a file `-delete`).
    if (word.glob && couldBecomeOption(word)) findings.push(unlisted(command, word.text))
    starts.push(word)
  }
  if (starts.length === 0) starts.push(literalWord('.'))
  const expression = index
  for (; index < args.length; index += 1) {
    const value = args[index]?.value
    if (value === undefined || LISTING_FLAGS.has(value)) continue
    if (LISTING_WITH_VALUE.has(value) || NEWER_XY.test(value)) index += 1
    else if (value === '-delete')
      findings.push(...starts.map((start) => deleteFinding(start, args)))
    else if (WRITES_FILE.has(value)) findings.push(writes(command))
    else if (!RUNS_COMMAND.has(value)) findings.push(unlisted(command, value))
    else {
      const end = args.findIndex(
        (word, at) => at > index && (word.value === ';' || word.value === '+'),
      )
      const inner = args.slice(index + 1, end === -1 ? args.length : end)
      findings.push(runFinding(command, inner, starts, context))
      index = end === -1 ? args.length : end
    }
  }
  // In the expression every word counts: a value the shell makes none or several words of
  // (`-maxdepth {1,-delete}` is `-maxdepth 1 -delete`) puts the words after it out of place.
  // So does a brace among the starting points: `find . {"",-delete}` is `find . '' -delete`,
  // whatever files there are (a glob there needs a file named like a primary: `jail` above).
  const dynamic = args.find(
    (word, at) =>
      word.value === undefined ||
      (!isOneWord(word) &&
        (at >= expression || (couldBecomeOption(word) && BRACE_MAKING_OPTION.test(word.pattern)))),
  )
  if (dynamic !== undefined) {
    findings.push({
      verdict: 'ask',
      rule: 'dynamic-argument',
      reason: `${quoted(command)}: ${dynamic.text} is only known when it runs (or the shell makes other words of it) and could make find delete files or run a program; write it literally, quoted`,
    })
  }
  if (findings.length > 0) return findings
  return [{ verdict: 'allow', rule: 'read-only', reason: 'find only lists files' }]
}

/**
 * `-delete` is `rm -r` of each starting point, except that a name or path test (`-name '*.o'`)
 * narrows it inside the workspace; outside, even narrowed, it is never allowed.
 */
function deleteFinding(start: ShellWord, args: readonly ShellWord[]): CommandFinding {
  const narrowed = args.some(
    (word, index) =>
      NAME_TESTS.has(word.value ?? '') && !/^\*?$/.test(args[index + 1]?.value ?? ''),
  )
  const danger = pathDanger(start)
  switch (danger === 'workspace' && narrowed ? undefined : danger) {
    case 'system':
    case 'home':
      return {
        verdict: 'deny',
        rule: 'system-delete',
        reason: `find ${start.text} -delete would delete everything under ${start.text}, outside the workspace; this is never allowed: search paths inside the workspace`,
      }
    case 'workspace':
      return {
        verdict: 'ask',
        rule: 'workspace-wipe',
        reason: `find ${start.text} -delete can delete the whole workspace; a person must approve this, or narrow the search`,
      }
    case 'unknown':
    case undefined:
      return {
        verdict: 'jail',
        rule: 'confined',
        reason: `find -delete deletes files under ${start.text}; it runs confined`,
      }
  }
}

function unlisted(command: ResolvedCommand, what: string): CommandFinding {
  return {
    verdict: 'jail',
    rule: 'confined',
    reason: `${quoted(command)}: ${what} is not (or could expand to something that is not) a find expression known to only list; it runs confined`,
  }
}

function writes(command: ResolvedCommand): CommandFinding {
  return {
    verdict: 'jail',
    rule: 'writes-file',
    reason: `${quoted(command)} writes a file; it runs confined`,
  }
}

function runFinding(
  command: ResolvedCommand,
  inner: readonly ShellWord[],
  starts: readonly ShellWord[],
  context: RuleContext,
): CommandFinding {
  const substituted = (replacement: (word: ShellWord) => ShellWord): ShellWord[] =>
    inner.map((word) => ((word.value ?? '').includes('{}') ? replacement(word) : word))
  const variants = [
    substituted((word) => dynamicWord(word.text, (word.value ?? '').split('{}')[0])),
    ...starts
      .filter((start) => start.value !== undefined)
      .map((start) =>
        substituted((word) => literalWord((word.value ?? '').replaceAll('{}', start.value ?? ''))),
      ),
  ]
  const findings = variants.map((words): CommandFinding => {
    const resolution = resolveCommand({ ...command.source, assignments: [], words, redirects: [] })
    if (resolution.type === 'unclear') return resolution.finding
    if (resolution.type === 'none') return { verdict: 'jail', rule: 'confined', reason: '' }
    return context.judgeCommand(resolution.command)
  })
  const worst = mostSevere(findings) ?? { verdict: 'jail', rule: 'confined', reason: '' }
  const runs = inner.map((word) => word.text).join(' ')
  if (worst.verdict === 'allow' || worst.verdict === 'jail') {
    return {
      verdict: 'jail',
      rule: 'confined',
      reason: `find runs ${runs} on what it finds; it runs confined`,
    }
  }
  return { ...worst, reason: `find runs ${runs} on what it finds: ${worst.reason}` }
}
