/**
 * @module workshop/session-lines
 * The lines of work as one session sees them: which line its tools act on, and the fork,
 * diff, review, merge and discard operations. Every line a caller names is looked up once,
 * here, among the forks the session's principal may act on (`WorkspaceLines.find`): a fork of
 * another owner answers `not_found` like one that does not exist. Merging into main, the
 * user's live folder, is the moment a person reviews: it goes through the session's approver;
 * so does every other way into main from an isolated session (switching to it, writing it).
 */
import { goneLineError } from './gone-line.ts'
import { gateWorkspace } from '../access/gated-workspace.ts'
import { EitriError } from '../errors/eitri-error.ts'
import type { AccessContext } from '../ports/access-context.ts'
import {
  MAIN_LINE,
  type LineControl,
  type LineInfo,
  type LineMergeInfo,
  type LineSwitch,
  type LineWriteIntent,
  type RestoreInfo,
} from '../ports/line-control.ts'
import type { ForkInfo, Principal, WorkspaceLines } from '../workspace/workspace-lines.ts'
import { displayName, forksBelowRefusal } from '../workspace/fork-registry.ts'
import { runOfWorld } from '../workspace/fork-owner.ts'
import { recordTitle } from '../workspace/snapshot-record.ts'
import type { LineSurfaces } from './line-surfaces.ts'

/** What a session's line control needs from the session. */
export interface SessionLineOptions {
  readonly lines: WorkspaceLines
  readonly surfaces: LineSurfaces
  readonly current: () => string
  readonly switchTo: (line: string) => Promise<void>
  /** The access in force for the call that uses the control. */
  readonly access: () => AccessContext
  /** Who acts: the owner of the forks this session makes, and what it may see. */
  readonly principal: Principal
  /**
   * An isolated session of a principal other than the person: main is reached only through a
   * person (switching to it and writing it ask the approver; reading it does not).
   */
  readonly guardMain: boolean
  /** Makes the session a fresh fork of main (its session fork, after it discarded its own). */
  readonly isolate: () => Promise<void>
  /** The session's id, as its snapshots record it. */
  readonly session: string
  /** A person at the terminal: may change a Run's world (amend it before a merge). */
  readonly changesRunWorlds?: boolean | undefined
  /**
   * The session is a Run's (its tool calls): it works in this line, the Run's world, and
   * changes no other line, nor settles its own (its settlement does, once the Run ends).
   */
  readonly runWorld?: string | undefined
  /** The ids of the Runs the session hired from a line. */
  readonly runsHiredFrom?: ((line: string) => readonly string[]) | undefined
  /** Cancels the Runs the session hired from a line, and waits for them to settle, before it is discarded. */
  readonly cancelRunsOf?: ((line: string) => Promise<void>) | undefined
}

/** What a Run does to its own world through its tools; merging or discarding it is not one. */
const RUN_OWN_CHANGES = new Set(['used', 'written', 'committed'])

/** The line control of one session. */
export function sessionLineControl(options: SessionLineOptions): LineControl {
  const { lines, principal } = options
  const visibleSnapshot = (record: { call?: { session?: string } }): boolean =>
    principal.seesEveryFork || record.call === undefined || record.call.session === options.session
  const info = (fork: ForkInfo): LineInfo => ({
    id: fork.id,
    ...(fork.name === undefined ? {} : { name: fork.name }),
    parent: fork.parent,
    created: fork.created,
    readOnly: fork.readOnly,
  })
  /** The one lookup every door goes through: the line's id, if this session may act on it. */
  const reach = (idOrName: string): ForkInfo | typeof MAIN_LINE => {
    try {
      return lines.find(idOrName, principal)
    } catch (error) {
      // The session's own fork, gone: the same answer its file tools and shell give.
      const gone = idOrName === options.current() ? lines.gone(idOrName) : undefined
      throw gone === undefined ? error : goneLineError(gone)
    }
  }
  const resolve = (idOrName: string): string => {
    const found = reach(idOrName)
    return found === MAIN_LINE ? MAIN_LINE : found.id
  }
  /**
   * The line, if this session may change it (switch to it, write, commit, merge, discard): a
   * Run's world is read here, but changed only by its Run and settled through the Run.
   */
  const changeable = (idOrName: string, what: string): string => {
    const id = resolve(idOrName)
    if (options.runWorld !== undefined) return ownWorld(idOrName, id, what)
    if (options.changesRunWorlds === true) return id
    const found = id === MAIN_LINE ? undefined : reach(id)
    const run = found === undefined || found === MAIN_LINE ? undefined : runOfWorld(found)
    if (run !== undefined) {
      throw new EitriError(
        'permission_denied',
        `${idOrName} is the world of Run ${run}: only the Run changes it, so it cannot be ${what} here. Read it with workspace_diff or workspace_review; settle it with run_settle (your own Runs) or \`eitri runs merge|discard ${run}\` (a person).`,
        { data: { field: 'fork' } },
      )
    }
    return id
  }
  /** A Run's session: its own world, for what a Run does to it; nothing else. */
  const ownWorld = (idOrName: string, id: string, what: string): string => {
    const world = options.runWorld as string
    if (id === world && RUN_OWN_CHANGES.has(what)) return id
    const own = reach(world)
    const name = own === MAIN_LINE ? world : displayName(own)
    throw new EitriError(
      'permission_denied',
      id === world
        ? `This Run's world cannot be ${what} by the Run itself: it is settled when the Run ends (merged, kept for review or discarded, as its hire asked).`
        : `${idOrName} is not this Run's world, so it cannot be ${what} here: a Run changes only its own world (${name}). Work there, or hire a child for separate work.`,
      { data: { field: 'fork' } },
    )
  }
  /** Refuses what a Run's session may never do (make lines, restore main). */
  const refuseInRun = (what: string): void => {
    if (options.runWorld === undefined) return
    throw new EitriError(
      'permission_denied',
      `A Run cannot ${what}: it works in its own world only. Hire a child for separate work.`,
    )
  }
  /** Asks a person for a way into main; undefined when approved, else why not. */
  const askForMain = async (request: {
    tool: string
    input: unknown
    reason: string
    summary: string
    signal: AbortSignal
  }): Promise<string | undefined> => {
    const approve = options.access().approve
    if (approve === undefined) return 'no person can be asked in this session'
    const answer = await approve(request)
    return answer.type === 'approved' ? undefined : answer.reason
  }
  return {
    get current() {
      return options.current()
    },
    list: () => lines.forks(principal).map(info),
    overview: async () =>
      (await lines.overview(principal)).map((fork) => ({
        ...info(fork),
        state: fork.state,
        changes: fork.changes,
        lastActivity: fork.lastActivity,
      })),
    resolve,
    async fork({ name, from }) {
      refuseInRun('make forks')
      return info(
        await lines.fork({
          from: resolve(from ?? options.current()),
          by: principal,
          ...(name === undefined ? {} : { name }),
        }),
      )
    },
    async use(line, { signal }): Promise<LineSwitch> {
      const id = changeable(line, 'used')
      if (id === MAIN_LINE && options.guardMain && options.current() !== MAIN_LINE) {
        const refusal = await askForMain({
          tool: 'workspace_use',
          input: { fork: MAIN_LINE },
          reason:
            'this session is isolated on a fork; on main its files, shell and js_eval change the user’s live folder directly',
          summary: 'switch this session to main (your live folder)',
          signal,
        })
        if (refusal !== undefined) return { type: 'refused', line: MAIN_LINE, reason: refusal }
      }
      await options.switchTo(id)
      return { type: 'switched', line: id }
    },
    diff: (fork) => lines.diff(resolve(fork)),
    review: (fork) => lines.review(resolve(fork)),
    async merge(fork, { signal }): Promise<LineMergeInfo> {
      const found = reach(changeable(fork, 'merged'))
      if (found === MAIN_LINE)
        throw new EitriError('invalid_input', 'main is not a fork: name the fork to merge.')
      // Merged already: nothing is left to bring, so no person is asked (the question would list
      // the files the first merge brought, as if they were coming again).
      if (found.merged !== undefined) return { type: 'nothing', into: found.merged.into }
      /** The fork's head as the person was shown it: only that is merged. */
      let expectedHead: string | undefined
      if (
        found.parent !== MAIN_LINE &&
        !lines.forks(principal).some((f) => f.id === found.parent)
      ) {
        // A merge writes its parent: a fork below another owner's (a Run's world) is settled
        // by its owner, not through this session.
        return {
          type: 'refused',
          into: found.parent,
          reason: `its parent line ${found.parent} is not one this session may change`,
        }
      }
      // Merging into a Run's world would change it behind its Run.
      if (found.parent !== MAIN_LINE) changeable(found.parent, 'merged into')
      if (found.parent === MAIN_LINE) {
        const shown = await lines.diffAt(found.id)
        expectedHead = shown.head
        const changes = shown.changes
        const summary = `merge ${displayName(found)} into main (your live folder): ${changes.length} file${changes.length === 1 ? '' : 's'}: ${changes
          .slice(0, 20)
          .map((change) => `${change.path} (${change.status})`)
          .join(', ')}${changes.length > 20 ? ', …' : ''}`
        const refusal = await askForMain({
          tool: 'workspace_merge',
          // The head shown: approved for the session, a merge of the fork as it is later (after
          // a conflict, with other files) is asked again.
          input: { fork: found.id, head: expectedHead },
          reason: 'a merge into main changes the user’s live files',
          summary,
          signal,
        })
        if (refusal !== undefined) {
          // What the person runs to merge it themselves (the approval's own hint is generic).
          const reason = `${refusal} A person merges it from a terminal with \`eitri merge ${found.id}\` (the same --workspace and --state-dir as this server).`
          return { type: 'refused', into: MAIN_LINE, reason }
        }
      }
      const outcome = await lines.merge(
        found.id,
        expectedHead === undefined ? {} : { expectedHead },
      )
      switch (outcome.type) {
        case 'merged': {
          const notes = [...(outcome.notes ?? [])]
          // A merged fork is read-only: an isolated session that merged its own goes on in a
          // fresh fork of main, as after a discard, never on main (its tools kept answering
          // "merged, read-only" and its tasks "work on main instead", which it may not).
          if (options.guardMain && found.id === options.current()) {
            await options.isolate()
            const fresh = reach(options.current())
            const name = fresh === MAIN_LINE ? MAIN_LINE : displayName(fresh)
            notes.push(`This session now works on a fresh fork of main, ${name}.`)
          }
          return {
            type: 'merged',
            into: outcome.into,
            paths: outcome.changes.map((change) => change.path),
            ...(notes.length === 0 ? {} : { notes }),
          }
        }
        case 'nothing':
        case 'conflict':
        case 'changed-on-disk':
          return outcome
        case 'refused':
          return {
            type: 'refused',
            into: outcome.into,
            reason: `main's policy refuses ${outcome.refused.length} path(s), so nothing was merged: ${outcome.refused
              .map((refused) => `${refused.path}: ${refused.reason}`)
              .join(
                '; ',
              )}. Remove them from the fork (or ask the user to change them), then merge again.`,
          }
      }
    },
    async discard(fork) {
      const id = changeable(fork, 'discarded')
      // Its Runs first: each works in a fork of this line, which could not go while they run.
      // Not when another fork below keeps the line: a refused discard cancels nothing.
      const runs = new Set(options.runsHiredFrom?.(id) ?? [])
      if (runs.size > 0) {
        const below = lines.forks().filter((candidate) => candidate.parent === id)
        const found = reach(id)
        if (found !== MAIN_LINE && below.some((child) => !runs.has(runOfWorld(child) ?? '')))
          throw forksBelowRefusal(found, below)
        await options.cancelRunsOf?.(id)
      }
      if (id === options.current()) {
        // An isolated session never falls back onto main: it moves to a fresh fork of its own.
        if (options.guardMain) await options.isolate()
        else await options.switchTo(MAIN_LINE)
      }
      await lines.discard(id)
      await options.surfaces.drop(id)
    },
    log: (line) => lines.log(resolve(line)),
    commit: (line, message) => lines.commit(changeable(line, 'committed'), message),
    async workspace(line, { signal, write }) {
      const id = write === undefined ? resolve(line) : changeable(line, 'written')
      const surface = await options.surfaces.surface(id)
      const access = options.access()
      if (id !== MAIN_LINE || !options.guardMain || options.current() === MAIN_LINE)
        return gateWorkspace(surface.view, access, signal)
      if (write === undefined) return gateWorkspace(surface.view, readOnlyMain(access), signal)
      const refusal = await askForMain(mainWrite(write, signal))
      if (refusal !== undefined)
        throw new EitriError('permission_denied', `Not written to main: ${refusal}.`)
      return gateWorkspace(surface.view, access, signal)
    },
    // Snapshots record calls (tool, path or command): a session that does not see every fork
    // sees its own calls' snapshots only, never another connection's activity.
    snapshots: async () => (await lines.snapshots.list()).filter(visibleSnapshot),
    async restore(snapshot, { paths, force, signal }): Promise<RestoreInfo> {
      refuseInRun('restore snapshots of main')
      const access = options.access()
      if (access.level === 'read-only')
        return {
          type: 'refused',
          reason: `a restore writes the user’s live files, and this session is read-only (${access.mode} mode); ask the user to run \`eitri restore ${snapshot}\` instead`,
        }
      const record = await lines.snapshots.log.find(snapshot)
      if (!visibleSnapshot(record)) {
        throw new EitriError(
          'not_found',
          `No snapshot ${JSON.stringify(snapshot)} among this session's; workspace_snapshots lists them.`,
        )
      }
      const what =
        paths === undefined || paths.length === 0 ? 'every file' : paths.slice(0, 20).join(', ')
      const answer =
        access.approve === undefined
          ? { type: 'unavailable' as const, reason: 'no person can be asked in this session' }
          : await access.approve({
              tool: 'workspace_restore',
              input: { snapshot: record.id, ...(paths === undefined ? {} : { paths }), force },
              reason: 'a restore puts back the user’s live files as they were at a snapshot',
              summary: `restore snapshot #${record.id} (${record.time}, ${recordTitle(record)}) into main (your live folder): ${what}${force === true ? ', overwriting your own changes since' : ''}`,
              signal,
            })
      if (answer.type !== 'approved') return { type: 'refused', reason: answer.reason }
      return lines.restore(record.id, {
        ...(paths === undefined ? {} : { paths }),
        ...(force === undefined ? {} : { force }),
      })
    },
  }
}

function mainWrite(write: LineWriteIntent, signal: AbortSignal) {
  return {
    tool: write.tool,
    input: { fork: MAIN_LINE, writes: write.writes },
    reason: 'this session is isolated on a fork; writing main changes the user’s live folder',
    summary: `${write.summary} into main (your live folder)`,
    signal,
  }
}

/** The access of an isolated session looking at main: reads as usual, no writes. */
function readOnlyMain(access: AccessContext): AccessContext {
  return {
    ...access,
    authorizePath: async (action) =>
      action.operation === 'read'
        ? access.authorizePath(action)
        : {
            type: 'refused',
            code: 'permission_denied',
            reason: `main is the user's live folder and this session is isolated on a fork: ${action.path} was not written. Write your fork, or ask for main with room_write {"fork":"main"} (a person approves)`,
          },
  }
}
