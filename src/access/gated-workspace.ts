/**
 * @module access/gated-workspace
 * The workspace as a call sees it: the path policy first, then the access in force (read-only
 * refuses writes, rules deny or allow, a person approves protected writes and, at full access,
 * writes outside the workspace). File tools, and any custom tool, only ever get this view.
 */
import { EitriError } from '../errors/eitri-error.ts'
import type { AccessContext, PathAction } from '../tool/access-context.ts'
import type { WorkspaceView } from '../tool/workspace-view.ts'
import { writeOutsideWorkspace } from './host-write.ts'
import { EXEMPT_WRITES, type ConfinedWorkspace } from './workspace-view.ts'

/** The view `base` gated by `access`. */
export function gateWorkspace(base: ConfinedWorkspace, access: AccessContext): WorkspaceView {
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

  async function authorize(path: string, signal?: AbortSignal) {
    const resolved = await target(path)
    const decision = await access.authorizePath({
      tool: 'write_file',
      operation: 'write',
      path: resolved.path,
      ...(resolved.refusal === undefined ? {} : { refusal: resolved.refusal }),
      ...(signal === undefined ? {} : { signal }),
    })
    if (decision.type === 'refused') {
      throw new EitriError(
        decision.code,
        decision.reason.startsWith('Refused') ? decision.reason : `Refused: ${decision.reason}.`,
      )
    }
    return { ...resolved, exemption: decision.exemption }
  }

  async function authorizeRead(path: string): Promise<string> {
    const resolved = await base.resolve(path, 'read')
    const decision = await access.authorizePath({
      tool: 'read_file',
      operation: 'read',
      path: resolved,
    })
    if (decision.type === 'refused')
      throw new EitriError(decision.code, `Refused: ${decision.reason}.`)
    return resolved
  }

  return {
    line: base.line,
    resolve: (path, intent, options) => base.resolve(path, intent, options),
    async readFile(path, options) {
      return base.readFile(await authorizeRead(path), options)
    },
    async writeFile(path, data, options = {}) {
      const decided = await authorize(path, options.signal)
      if (decided.exemption === 'protected')
        return base[EXEMPT_WRITES].writeProtected(decided.path, data, { mode: options.mode })
      if (decided.exemption === 'outside') return writeOutsideWorkspace(decided.path, data)
      return base.writeFile(decided.path, data, {
        ...(options.mode === undefined ? {} : { mode: options.mode }),
      })
    },
    async makeFolder(path, options = {}) {
      await authorizePlain(path, options.signal)
      await base.makeFolder(path)
    },
    async remove(path, options = {}) {
      await authorizePlain(path, options.signal)
      await base.remove(path)
    },
    async createSymlink(path, linkTarget, options = {}) {
      await authorizePlain(path, options.signal)
      await base.createSymlink(path, linkTarget)
    },
    stat: (path, options) => base.stat(path, options),
    walk: (path, options) => base.walk(path, options),
    redact: (text) => base.redact(text),
  }

  /** Folder, removal and link operations get no exemption: refused unless plainly allowed. */
  async function authorizePlain(path: string, signal?: AbortSignal): Promise<void> {
    const decided = await authorize(path, signal)
    if (decided.exemption !== undefined) {
      throw new EitriError(
        'permission_denied',
        `Refused: only whole-file writes may be approved for ${decided.path}.`,
      )
    }
  }
}
