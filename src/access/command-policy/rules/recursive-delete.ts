/**
 * @module access/command-policy/rules/recursive-delete
 * `rm -r`, `chmod -R`, `chown -R`, `chgrp -R`: denied on `/`, a home or a system folder, asked
 * about on the whole workspace (for `rm`), in any flag order or spelling (`-rf`, `-r -f`,
 * `--recursive --force`, `/ -rf`, `-- /`). An argument only known at run time could be a flag
 * or any path, so it makes the command `ask` at least.
 */
import type { CommandFinding } from '../command-judgement.ts'
import { pathDanger } from '../dangerous-paths.ts'
import { hasOption, scanOptions, type OptionDefinition } from '../scan-options.ts'
import type { ShellWord } from '../shell-syntax.ts'
import { quoted, type CommandRuleCheck } from './rule.ts'

const RM_OPTIONS: readonly OptionDefinition[] = [
  { name: 'recursive', short: 'r', long: 'recursive' },
  { name: 'recursive', short: 'R' },
  { name: 'force', short: 'f', long: 'force' },
  { name: 'interactive', short: 'i', long: 'interactive', value: 'attached' },
  { name: 'interactive-once', short: 'I' },
  { name: 'dir', short: 'd', long: 'dir' },
  { name: 'verbose', short: 'v', long: 'verbose' },
  { name: 'one-file-system', long: 'one-file-system' },
  { name: 'preserve-root', long: 'preserve-root', value: 'attached' },
  { name: 'no-preserve-root', long: 'no-preserve-root' },
]

const CHANGE_OPTIONS: readonly OptionDefinition[] = [
  { name: 'recursive', short: 'R', long: 'recursive' },
  { name: 'changes', short: 'c', long: 'changes' },
  { name: 'silent', short: 'f', long: 'silent' },
  { name: 'quiet', long: 'quiet' },
  { name: 'verbose', short: 'v', long: 'verbose' },
  { name: 'reference', long: 'reference', value: 'required' },
  { name: 'from', long: 'from', value: 'required' },
  { name: 'no-dereference', short: 'h', long: 'no-dereference' },
  { name: 'dereference', long: 'dereference' },
  { name: 'preserve-root', long: 'preserve-root' },
  { name: 'no-preserve-root', long: 'no-preserve-root' },
  ...['H', 'L', 'P'].map((letter) => ({ name: letter, short: letter })),
]

const PROGRAMS: Readonly<Record<string, readonly OptionDefinition[]>> = {
  rm: RM_OPTIONS,
  chmod: CHANGE_OPTIONS,
  chown: CHANGE_OPTIONS,
  chgrp: CHANGE_OPTIONS,
}

const VERBS: Readonly<Record<string, string>> = {
  rm: 'delete',
  chmod: 'change the permissions of',
  chown: 'change the owner of',
  chgrp: 'change the group of',
}

export const checkRecursiveDelete: CommandRuleCheck = (command) => {
  const options = PROGRAMS[command.name]
  if (options === undefined) return []
  const scan = scanOptions(command.args, options)
  const recursive = hasOption(scan, 'recursive')
  const findings: CommandFinding[] = []
  if (recursive) {
    for (const target of scan.operands) {
      const finding = targetFinding(command.name, target)
      if (finding !== undefined) findings.push(finding)
    }
  }
  if (scan.dynamic.length > 0) {
    const word = scan.dynamic[0] as ShellWord
    findings.push({
      verdict: 'ask',
      rule: 'dynamic-argument',
      reason: `${quoted(command)}: ${word.text} is only known when it runs and could be a flag or any path; write the arguments literally`,
    })
  }
  return findings
}

function targetFinding(program: string, target: ShellWord): CommandFinding | undefined {
  const verb = VERBS[program] ?? 'change'
  switch (pathDanger(target)) {
    case 'system':
    case 'home':
      return {
        verdict: 'deny',
        rule: 'system-delete',
        reason: `${program} would recursively ${verb} ${target.text}, outside the workspace and needed by the system or its users; this is never allowed: name paths inside the workspace`,
      }
    case 'workspace':
      return program === 'rm'
        ? {
            verdict: 'ask',
            rule: 'workspace-wipe',
            reason: `rm would recursively delete the whole workspace or its history (${target.text}); a person must approve this, or delete only the paths you mean`,
          }
        : undefined
    case 'unknown':
      return {
        verdict: 'ask',
        rule: 'dynamic-argument',
        reason: `${program} would recursively ${verb} ${target.text}, which is only known when it runs; write the path literally`,
      }
    case undefined:
      return undefined
  }
}
