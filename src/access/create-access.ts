/**
 * @module access/create-access
 * The library's way to build the access of a session, shared by every tool context.
 */
import type { ApprovalRecorder } from './approval-log.ts'
import type { ApprovalPolicy, Approver } from './approval.ts'
import { modeCatalog, type ModeDefinition } from './modes.ts'
import { rulesFromConfig } from './permission-rules.ts'
import { SessionAccess, type AccessOptions } from './session-access.ts'
import type { AccessLevel, CommandJudgement } from '../ports/access-context.ts'

/** Plain options: rules as the configuration file writes them. */
export interface CreateAccessOptions {
  readonly setting?: AccessLevel
  readonly mode?: string
  /** Extra modes beside `default` and `plan`. */
  readonly modes?: readonly { name: string; description: string; access?: AccessLevel }[]
  readonly caps?: readonly AccessLevel[]
  readonly approval?: ApprovalPolicy
  readonly rules?: {
    allow?: readonly (string | { rule: string; approval: 'ask' | 'none' })[]
    deny?: readonly string[]
  }
  readonly approver?: Approver
  readonly recorder?: ApprovalRecorder
  readonly judge?: (command: string, options: { escalate?: boolean }) => Promise<CommandJudgement>
}

/**
 * Builds a session's access.
 *
 * @throws TypeError for a rule that does not parse; EitriError `config_invalid` for an unknown mode.
 * @example
 * const access = createAccess({
 *   mode: 'plan',
 *   rules: { allow: ['shell(npm run test:*)'], deny: ['shell(git push *)'] },
 *   approver: async (request) => (request.dangerous ? { type: 'denied' } : { type: 'approved' }),
 * })
 */
export function createAccess(options: CreateAccessOptions = {}): SessionAccess {
  const modes: ModeDefinition[] = modeCatalog(
    (options.modes ?? []).map((mode) => ({
      ...mode,
      ...(mode.access === undefined ? {} : { access: mode.access }),
    })),
  )
  const accessOptions: AccessOptions = {
    modes,
    rules: rulesFromConfig({
      allow: [...(options.rules?.allow ?? [])],
      deny: [...(options.rules?.deny ?? [])],
    }),
    ...(options.setting === undefined ? {} : { setting: options.setting }),
    ...(options.mode === undefined ? {} : { mode: options.mode }),
    ...(options.caps === undefined ? {} : { caps: options.caps }),
    ...(options.approval === undefined ? {} : { approval: options.approval }),
    ...(options.approver === undefined ? {} : { approver: options.approver }),
    ...(options.recorder === undefined ? {} : { recorder: options.recorder }),
    ...(options.judge === undefined ? {} : { judge: options.judge }),
  }
  return new SessionAccess(accessOptions)
}
