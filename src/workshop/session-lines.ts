/**
 * @module workshop/session-lines
 * The lines of work as one session sees them: which line its tools act on, and the fork,
 * diff, review, merge and discard operations. Merging into main, the user's live folder, is
 * the moment a person reviews: it goes through the session's approver.
 */
import { gateWorkspace } from '../access/gated-workspace.ts'
import { EitriError } from '../errors/eitri-error.ts'
import type { AccessContext } from '../tool/access-context.ts'
import type { LineControl, LineInfo, LineMergeInfo, RestoreInfo } from '../tool/line-control.ts'
import { recordTitle } from '../workspace/snapshot-record.ts'
import { MAIN, type ForkInfo, type WorkspaceLines } from '../workspace/workspace-lines.ts'
import type { LineSurfaces } from './line-surfaces.ts'

/** What a session's line control needs from the session. */
export interface SessionLineOptions {
  readonly lines: WorkspaceLines
  readonly surfaces: LineSurfaces
  readonly current: () => string
  readonly switchTo: (line: string) => Promise<void>
  /** The access in force for the call that uses the control. */
  readonly access: () => AccessContext
}

/** The line control of one session. */
export function sessionLineControl(options: SessionLineOptions): LineControl {
  const { lines } = options
  const info = (fork: ForkInfo): LineInfo => ({
    id: fork.id,
    ...(fork.name === undefined ? {} : { name: fork.name }),
    parent: fork.parent,
    created: fork.created,
    readOnly: fork.readOnly,
  })
  const resolve = (idOrName: string): string => {
    const found = lines.find(idOrName)
    return found === MAIN ? MAIN : found.id
  }
  return {
    get current() {
      return options.current()
    },
    list: () => lines.forks().map(info),
    resolve,
    async fork({ name, from }) {
      return info(
        await lines.fork({
          from: resolve(from ?? options.current()),
          ...(name === undefined ? {} : { name }),
        }),
      )
    },
    use: (line) => options.switchTo(resolve(line)),
    diff: (fork) => lines.diff(resolve(fork)),
    review: (fork) => lines.review(resolve(fork)),
    async merge(fork, { signal }): Promise<LineMergeInfo> {
      const id = resolve(fork)
      if (id === MAIN)
        throw new EitriError('invalid_input', 'main is not a fork: name the fork to merge.')
      const found = lines.find(id) as ForkInfo
      if (found.parent === MAIN) {
        const changes = await lines.diff(id)
        const approve = options.access().approve
        const summary = `merge ${found.name ?? found.id} into main (your live folder): ${changes.length} file${changes.length === 1 ? '' : 's'}: ${changes
          .slice(0, 20)
          .map((change) => `${change.path} (${change.status})`)
          .join(', ')}${changes.length > 20 ? ', …' : ''}`
        const refusal =
          approve === undefined
            ? 'no person can be asked in this session'
            : await approve({
                tool: 'workspace_merge',
                input: { fork: id },
                reason: 'a merge into main changes the user’s live files',
                summary,
                signal,
              })
        if (refusal !== undefined) return { type: 'refused', into: MAIN, reason: refusal }
      }
      const outcome = await lines.merge(id)
      switch (outcome.type) {
        case 'merged':
          return {
            type: 'merged',
            into: outcome.into,
            paths: outcome.changes.map((change) => change.path),
          }
        case 'nothing':
          return { type: 'nothing', into: outcome.into }
        case 'conflict':
          return { type: 'conflict', into: outcome.into, conflicts: outcome.conflicts }
        case 'changed-on-disk':
          return { type: 'changed-on-disk', into: outcome.into, paths: outcome.paths }
      }
    },
    async discard(fork) {
      const id = resolve(fork)
      if (id === options.current()) await options.switchTo(MAIN)
      await lines.discard(id)
      await options.surfaces.drop(id)
    },
    log: (line) => lines.log(resolve(line)),
    commit: (line, message) => lines.commit(resolve(line), message),
    async workspace(line) {
      const surface = await options.surfaces.surface(resolve(line))
      return gateWorkspace(surface.view, options.access())
    },
    snapshots: () => lines.snapshots.list(),
    async restore(snapshot, { paths, force, signal }): Promise<RestoreInfo> {
      const access = options.access()
      if (access.level === 'read-only')
        return {
          type: 'refused',
          reason: `a restore writes the user’s live files, and this session is read-only (${access.mode} mode); ask the user to run \`eitri restore ${snapshot}\` instead`,
        }
      const record = await lines.snapshots.log.find(snapshot)
      const what =
        paths === undefined || paths.length === 0 ? 'every file' : paths.slice(0, 20).join(', ')
      const refusal =
        access.approve === undefined
          ? 'no person can be asked in this session'
          : await access.approve({
              tool: 'workspace_restore',
              input: { snapshot: record.id, ...(paths === undefined ? {} : { paths }), force },
              reason: 'a restore puts back the user’s live files as they were at a snapshot',
              summary: `restore snapshot #${record.id} (${record.time}, ${recordTitle(record)}) into main (your live folder): ${what}${force === true ? ', overwriting your own changes since' : ''}`,
              signal,
            })
      if (refusal !== undefined) return { type: 'refused', reason: refusal }
      return lines.restore(record.id, {
        ...(paths === undefined ? {} : { paths }),
        ...(force === undefined ? {} : { force }),
      })
    },
  }
}
