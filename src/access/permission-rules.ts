/**
 * @module access/permission-rules
 * Allow and deny rules in the style users know from Claude Code: `shell(npm run test:*)`,
 * `shell(git commit *)`, `write_file(src/**)`. Deny wins over allow; in a compound command
 * every part must match an allow rule for the command to pass without a question.
 */
import picomatch from 'picomatch'
import type { ConfiguredRules } from '../config/config-file.ts'

/** What a rule applies to: a shell command, or a path read or written by a file tool. */
export type RuleSubject =
  | { readonly kind: 'command'; readonly parts: readonly string[] }
  | { readonly kind: 'path'; readonly operation: 'read' | 'write'; readonly path: string }
  | { readonly kind: 'call'; readonly tool: string }

/** One parsed rule. */
export interface PermissionRule {
  /** As written in the configuration. */
  readonly source: string
  readonly tool: string
  /** Absent: the rule covers every call of the tool. */
  readonly specifier?: string
  /** For allow rules on protected paths: skip the approver too. */
  readonly withoutApproval: boolean
}

const RULE_PATTERN = /^([a-z][a-z0-9_]{0,63})(?:\((.*)\))?$/s

/** Tools whose rules name paths, and which operation they cover. */
const PATH_TOOLS: Readonly<Record<string, 'read' | 'write'>> = {
  read_file: 'read',
  glob: 'read',
  grep: 'read',
  write_file: 'write',
  edit_file: 'write',
}

/**
 * Parses a rule such as `shell(npm run test:*)`.
 *
 * @returns the rule, or a message saying what is wrong with it
 */
export function parseRule(source: string, withoutApproval = false): PermissionRule | string {
  const match = RULE_PATTERN.exec(source.trim())
  if (match === null)
    return `${JSON.stringify(source)} is not a rule: write TOOL or TOOL(SPECIFIER), such as shell(npm test *) or write_file(src/**)`
  const [, tool = '', specifier] = match
  if (specifier !== undefined && specifier.trim() === '')
    return `${JSON.stringify(source)} has an empty specifier: drop the parentheses to cover every call`
  return {
    source,
    tool,
    ...(specifier === undefined ? {} : { specifier: specifier.trim() }),
    withoutApproval,
  }
}

/**
 * The rules of a configuration. Rules were checked when the configuration was loaded, so a
 * rule that does not parse here is a programming error.
 */
export function rulesFromConfig(rules: ConfiguredRules): PermissionRules {
  const parse = (source: string, withoutApproval = false): PermissionRule => {
    const rule = parseRule(source, withoutApproval)
    if (typeof rule === 'string') throw new TypeError(rule)
    return rule
  }
  return new PermissionRules(
    rules.allow.map((entry) =>
      typeof entry === 'string' ? parse(entry) : parse(entry.rule, entry.approval === 'none'),
    ),
    rules.deny.map((entry) => parse(entry)),
  )
}

/** The rule set: deny and allow lists, parsed once. */
export class PermissionRules {
  readonly allow: readonly PermissionRule[]
  readonly deny: readonly PermissionRule[]

  constructor(allow: readonly PermissionRule[] = [], deny: readonly PermissionRule[] = []) {
    this.allow = allow
    this.deny = deny
  }

  /** The first deny rule matching, if any. */
  denied(subject: RuleSubject): PermissionRule | undefined {
    return this.deny.find((rule) => matchesAny(rule, subject))
  }

  /** The allow rule that covers the whole subject (every part of a command), if any. */
  allowed(subject: RuleSubject): PermissionRule | undefined {
    if (subject.kind === 'command') {
      if (subject.parts.length === 0) return undefined
      let last: PermissionRule | undefined
      for (const part of subject.parts) {
        last = this.allow.find((rule) => matches(rule, { kind: 'command', parts: [part] }))
        if (last === undefined) return undefined
      }
      return last
    }
    return this.allow.find((rule) => matches(rule, subject))
  }
}

/** A deny rule matches a command when it matches ANY part of it. */
function matchesAny(rule: PermissionRule, subject: RuleSubject): boolean {
  if (subject.kind !== 'command') return matches(rule, subject)
  return subject.parts.some((part) => matches(rule, { kind: 'command', parts: [part] }))
}

function matches(rule: PermissionRule, subject: RuleSubject): boolean {
  switch (subject.kind) {
    case 'command':
      return (
        rule.tool === 'shell' &&
        (rule.specifier === undefined ||
          subject.parts.every((part) => commandMatches(rule.specifier as string, part)))
      )
    case 'path':
      return (
        PATH_TOOLS[rule.tool] === subject.operation &&
        (rule.specifier === undefined || picomatch(rule.specifier, { dot: true })(subject.path))
      )
    case 'call':
      return rule.tool === subject.tool && rule.specifier === undefined
  }
}

/**
 * `npm run test:*` is the legacy prefix form: the command starts with `npm run test`.
 * Otherwise `*` matches any text (`git commit *`), and the rest must match exactly,
 * whitespace collapsed.
 */
export function commandMatches(specifier: string, command: string): boolean {
  const text = command.trim().replace(/\s+/g, ' ')
  if (specifier.endsWith(':*')) {
    const prefix = specifier.slice(0, -2).trim().replace(/\s+/g, ' ')
    return text === prefix || text.startsWith(`${prefix} `) || text.startsWith(`${prefix}:`)
  }
  const pattern = specifier.trim().replace(/\s+/g, ' ')
  const regex = new RegExp(`^${pattern.split('*').map(escapeRegex).join('.*')}$`, 's')
  return regex.test(text)
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
