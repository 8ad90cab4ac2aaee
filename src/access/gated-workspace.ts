/**
 * @module access/gated-workspace
 * The workspace as a call sees it: the path policy first, then the access in force (read-only
 * refuses writes, rules deny or allow, a person approves protected writes and, at full access,
 * writes outside the workspace). File tools, and any custom tool, only ever get this view.
 * A person is asked only when a yes would let the action happen, and is told which tool asks
 * and what it would do.
 */
import { EitriError } from '../errors/eitri-error.ts'
import type { AccessContext, PathAction, PathChange } from '../ports/access-context.ts'
import type { WorkspaceView } from '../ports/workspace-view.ts'
import { writeOutsideWorkspace } from './host-write.ts'
import { EXEMPT_WRITES, type ConfinedWorkspace } from './confined-workspace.ts'
import { refusedText } from './refusal-text.ts'

/** What each change is called in a refusal. */
const CHANGE_WORDS: Readonly<Record<PathChange, string>> = {
  'write-file': 'writing',
  'make-folder': 'creating a folder at',
  remove: 'removing',
  'create-symlink': 'creating a link at',
}

/**
 * The view `base` gated by `access` for one call: approval requests name `tool` (by default the
 * file tools' names; a tool call's view names its own tool through `forTool`), and a person
 * asked is no longer asked once `signal` (the call's) aborts, or an operation's own signal does.
 */
export function gateWorkspace(
  base: ConfinedWorkspace,
  access: AccessContext,
  signal: AbortSignal,
  tool?: string,
): WorkspaceView {
  /** Resolves for writing, keeping the policy's refusal for the access layer to weigh. */
  async function target(path: string): Promise<{ path: string; refusal?: PathAction['refusal'] }> {
    try {
      return { path: await base.resolve(path, 'write') }
    } catch (error) {
      if (
        !EitriError.isInstance(error) ||
        (error.code !== 'protected_path' && error.code !== 'path_outside_workspace')
      )
        throw error
      const named = error.code === 'protected_path' ? await base.resolve(path, 'read') : path
      return { path: named, refusal: { code: error.code, reason: error.message } }
    }
  }

  async function authorize(path: string, change: PathChange, own: AbortSignal | undefined) {
    const resolved = await target(path)
    if (resolved.refusal !== undefined && change !== 'write-file') {
      // Only a whole-file write can be exempted (approved for a protected path, or outside at
      // full access): for anything else a yes would change nothing, so nobody is asked.
      throw new EitriError(
        resolved.refusal.code,
        `${sentence(resolved.refusal.reason)} Only writing a whole file there can be approved, not ${CHANGE_WORDS[change]} it.`,
      )
    }
    const decision = await access.authorizePath({
      tool: tool ?? 'write_file',
      operation: 'write',
      change,
      path: resolved.path,
      ...(resolved.refusal === undefined ? {} : { refusal: resolved.refusal }),
      signal: own ?? signal,
    })
    if (decision.type === 'refused') {
      throw new EitriError(
        decision.code,
        decision.reason.startsWith('Refused') ? decision.reason : refusedText(decision.reason),
      )
    }
    return { ...resolved, exemption: decision.exemption }
  }

  async function authorizeRead(path: string, own: AbortSignal | undefined): Promise<string> {
    const resolved = await base.resolve(path, 'read')
    const decision = await access.authorizePath({
      tool: tool ?? 'read_file',
      operation: 'read',
      path: resolved,
      signal: own ?? signal,
    })
    if (decision.type === 'refused')
      throw new EitriError(decision.code, refusedText(decision.reason))
    return resolved
  }

  /** Folder, removal and link operations get no exemption: refused unless plainly allowed. */
  async function authorizePlain(path: string, change: PathChange, own: AbortSignal | undefined) {
    const decided = await authorize(path, change, own)
    if (decided.exemption !== undefined) {
      throw new EitriError(
        'permission_denied',
        `Refused: only whole-file writes may be approved for ${decided.path}.`,
      )
    }
  }

  return {
    line: base.line,
    resolve: (path, intent, options) => base.resolve(path, intent, options),
    async readFile(path, options) {
      return base.readFile(await authorizeRead(path, options?.signal), options)
    },
    async writeFile(path, data, options = {}) {
      const decided = await authorize(path, 'write-file', options.signal)
      if (decided.exemption === 'protected')
        return base[EXEMPT_WRITES].writeProtected(decided.path, data, { mode: options.mode })
      if (decided.exemption === 'outside') return writeOutsideWorkspace(decided.path, data)
      return base.writeFile(decided.path, data, {
        ...(options.mode === undefined ? {} : { mode: options.mode }),
      })
    },
    async writeFiles(files, options = {}) {
      // All or nothing: each path passes the policy, then the access in force, before any is
      // written; a batch takes no exemption (one approved file would land alone).
      for (const file of files) await base.resolve(file.path, 'write')
      for (const file of files) await authorizePlain(file.path, 'write-file', options.signal)
      return base.writeFiles(files)
    },
    async makeFolder(path, options = {}) {
      await authorizePlain(path, 'make-folder', options.signal)
      await base.makeFolder(path)
    },
    async remove(path, options = {}) {
      await authorizePlain(path, 'remove', options.signal)
      await base.remove(path)
    },
    async createSymlink(path, linkTarget, options = {}) {
      await authorizePlain(path, 'create-symlink', options.signal)
      await base.createSymlink(path, linkTarget)
    },
    stat: (path, options) => base.stat(path, options),
    walk: (path, options) => base.walk(path, options),
    redact: (text) => base.redact(text),
    forTool: (name) => gateWorkspace(base, access, signal, name),
  }
}

function sentence(text: string): string {
  return text.endsWith('.') ? text : `${text}.`
}
