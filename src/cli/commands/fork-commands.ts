/**
 * @module cli/commands/fork-commands
 * `eitri fork`, `forks [--prune]` (each fork's state, changes and last activity), `diff FORK`,
 * `merge FORK`, `undo-merge`, `discard FORK`, `log [FORK]`, `restore SNAPSHOT [PATH…]`: the person at the terminal working the workspace's
 * lines and its snapshots. Running `eitri merge FORK` or `eitri restore` is itself the person's
 * approval; each takes a snapshot of main first, so it can be undone.
 */
import { isListedSnapshot, MAIN_LINE } from '../../ports/line-control.ts'
import { displayName } from '../../workspace/fork-registry.ts'
import { describeSnapshot } from '../../tools/workspace/snapshot-tools.ts'
import type { Workshop } from '../../workshop/workshop.ts'
import type { CliIo } from '../cli-io.ts'
import { EXIT_FAILURE, EXIT_OK, UsageError } from '../cli-io.ts'
import type { CommandLine } from '../parse-command-line.ts'
import { openFromCommandLine } from './open-from-command-line.ts'

/** Runs a command that changes main between snapshots of it, as the person at the terminal. */
function changingMain<T>(
  workshop: Workshop,
  tool: string,
  detail: string,
  work: () => Promise<T>,
): Promise<T> {
  return workshop.lines.snapshots.around({ tool, detail, session: 'cli' }, work)
}

/** Runs one of the fork commands. */
export async function forkCommand(line: CommandLine, io: CliIo): Promise<number> {
  await using workshop = await openFromCommandLine(line)
  const lines = workshop.lines
  const [target] = line.positionals
  const need = (what: string): string => {
    if (target === undefined)
      throw new UsageError(`${line.command} needs ${what}, such as: eitri ${line.command} my-fork`)
    return target
  }
  switch (line.command) {
    case 'fork': {
      const fork = await lines.fork({
        ...(target === undefined ? {} : { name: target }),
        ...(line.fork === undefined ? {} : { from: line.fork }),
      })
      io.stdout(
        line.json
          ? `${JSON.stringify(fork)}\n`
          : `${fork.id}${fork.name === undefined ? '' : ` (${fork.name})`}\n`,
      )
      return EXIT_OK
    }
    case 'forks': {
      if (line.prune) {
        const removed = await lines.prune(workshop.config.snapshots)
        const { keep, maxAgeDays } = workshop.config.snapshots
        io.stderr(
          `Pruned ${removed.length} snapshot record(s) (keeping at most ${keep} snapshots, none older than ${maxAgeDays} days but the newest).\n`,
        )
        const pruned = await lines.pruneForks()
        io.stderr(
          `Removed ${pruned.length} fork(s) (merged, discarded, or empty and idle for an hour)${pruned.length === 0 ? '' : `: ${pruned.map(displayName).join(', ')}`}.\n`,
        )
      }
      const forks = await lines.overview()
      if (line.json) io.stdout(`${JSON.stringify(forks, null, 2)}\n`)
      else if (forks.length === 0) io.stdout('No forks.\n')
      else
        for (const fork of forks)
          io.stdout(
            `${fork.id}  ${(fork.name ?? '-').padEnd(16)}  ${fork.state.padEnd(9)}  ${String(fork.changes).padStart(4)} changed  last active ${fork.lastActivity}  from ${fork.parent}  by ${fork.owner}${fork.readOnly ? '  read-only' : ''}\n`,
          )
      return EXIT_OK
    }
    case 'diff': {
      const changes = await lines.diff(need('a fork'))
      if (line.json) io.stdout(`${JSON.stringify(changes, null, 2)}\n`)
      else if (changes.length === 0) io.stdout('No changes.\n')
      else
        for (const change of changes)
          io.stdout(
            change.diff === undefined
              ? `${change.status} ${change.path}${change.binary ? ' (binary)' : ''}\n`
              : `${change.diff}\n`,
          )
      return EXIT_OK
    }
    case 'merge': {
      const fork = need('a fork')
      const found = lines.find(fork)
      const outcome =
        found !== MAIN_LINE && found.parent === MAIN_LINE
          ? await changingMain(workshop, 'eitri merge', fork, () => lines.merge(fork))
          : await lines.merge(fork)
      if (line.json) io.stdout(`${JSON.stringify(outcome, null, 2)}\n`)
      switch (outcome.type) {
        case 'merged':
          if (!line.json) {
            io.stdout(
              `Merged into ${outcome.into}: ${outcome.changes.map((change) => `${change.path} (${change.status})`).join(', ')}\n`,
            )
            for (const note of outcome.notes ?? []) io.stdout(`${note}\n`)
          }
          return EXIT_OK
        case 'nothing':
          if (!line.json) io.stdout(`Nothing to merge into ${outcome.into}.\n`)
          return EXIT_OK
        case 'conflict':
          io.stderr(
            `Not merged: ${outcome.conflicts.length} conflict(s), nothing changed:\n${outcome.conflicts.map((conflict) => `  ${conflict.path}`).join('\n')}\n`,
          )
          return EXIT_FAILURE
        case 'changed-on-disk':
          io.stderr(
            `Not merged: these files changed on disk meanwhile: ${outcome.paths.join(', ')}\n`,
          )
          return EXIT_FAILURE
        case 'refused':
          io.stderr(
            `Not merged: main's policy refuses these paths, nothing changed:\n${outcome.refused.map((refused) => `  ${refused.path}: ${refused.reason}`).join('\n')}\n`,
          )
          return EXIT_FAILURE
      }
      return EXIT_FAILURE
    }
    case 'undo-merge': {
      const outcome = await changingMain(workshop, 'eitri undo-merge', 'the last merge', () =>
        lines.undoMerge(),
      )
      if (line.json) {
        io.stdout(`${JSON.stringify(outcome, null, 2)}\n`)
        return outcome.type === 'changed-on-disk' ? EXIT_FAILURE : EXIT_OK
      }
      if (outcome.type === 'nothing') io.stdout('No merge to undo.\n')
      else if (outcome.type === 'changed-on-disk') {
        io.stderr(`Not undone: these files changed since the merge: ${outcome.paths.join(', ')}\n`)
        return EXIT_FAILURE
      } else {
        io.stdout(
          `Undid the merge of ${outcome.merged} into main: ${outcome.paths.join(', ')} are as before it.\n`,
        )
        if (outcome.reopened !== undefined) {
          const name = displayName(outcome.reopened)
          io.stdout(
            `Fork ${outcome.merged} stays merged and read-only; its changes go on in a new fork of main, ${name}: work there with --fork ${name} (eitri call, exec), look with eitri diff ${name}, and merge it again with eitri merge ${name}.\n`,
          )
        }
      }
      return EXIT_OK
    }
    case 'discard':
      await lines.discard(need('a fork'))
      io.stdout(`Discarded ${target}.\n`)
      return EXIT_OK
    case 'log': {
      if (target === undefined) {
        const snapshots = (await lines.snapshots.list()).filter(isListedSnapshot)
        if (line.json) io.stdout(`${JSON.stringify(snapshots, null, 2)}\n`)
        else if (snapshots.length === 0) io.stdout('No snapshots yet.\n')
        else for (const snapshot of snapshots) io.stdout(`${describeSnapshot(snapshot)}\n`)
        return EXIT_OK
      }
      const log = await lines.log(target)
      if (line.json) io.stdout(`${JSON.stringify(log, null, 2)}\n`)
      else
        for (const entry of log)
          io.stdout(`${entry.commit.slice(0, 10)}  ${entry.time}  ${entry.message}\n`)
      return EXIT_OK
    }
    case 'restore':
      return await restore(workshop, line, io, need('a snapshot (a number from `eitri log`)'))
    case undefined:
    default:
      throw new UsageError(`unknown command '${line.command ?? ''}'`)
  }
}

/** `eitri restore SNAPSHOT [PATH…] [--force]`. */
async function restore(
  workshop: Workshop,
  line: CommandLine,
  io: CliIo,
  snapshot: string,
): Promise<number> {
  const paths = line.positionals.slice(1)
  // An unknown snapshot is refused before anything is snapshotted.
  const target = await workshop.lines.snapshots.log.find(snapshot)
  const outcome = await changingMain(
    workshop,
    'eitri restore',
    [`#${target.id}`, ...paths].join(' '),
    () =>
      workshop.lines.restore(target.id, {
        ...(paths.length === 0 ? {} : { paths }),
        force: line.force,
      }),
  )
  if (line.json) io.stdout(`${JSON.stringify(outcome, null, 2)}\n`)
  switch (outcome.type) {
    case 'restored': {
      if (line.json) return EXIT_OK
      const undo = (await workshop.lines.snapshots.list()).find(
        (record) => isListedSnapshot(record) && record.call?.tool === 'eitri restore',
      )
      io.stdout(
        `Restored snapshot #${outcome.snapshot}: ${outcome.paths.length === 0 ? 'no files' : outcome.paths.join(', ')}\n`,
      )
      for (const ref of outcome.refs)
        io.stdout(
          `  ${ref.name}: ${ref.from === undefined ? '(gone)' : ref.from.slice(0, 10)} -> ${ref.to.startsWith('ref: ') ? ref.to : ref.to.slice(0, 10)}\n`,
        )
      for (const failure of outcome.refsFailed)
        io.stderr(`eitri: not moved back: ${failure.name}: ${failure.reason}\n`)
      if (outcome.refsKept.length > 0)
        io.stdout(`Kept (made since the snapshot): ${outcome.refsKept.join(', ')}\n`)
      if (outcome.tooLarge.length > 0)
        io.stdout(
          `Left alone (never snapshotted: over the size bound, in a nested repository, or refused by git): ${outcome.tooLarge.join(', ')}\n`,
        )
      if (undo !== undefined) io.stdout(`Undo it with: eitri restore ${undo.id}\n`)
      return EXIT_OK
    }
    case 'nothing':
      if (!line.json)
        io.stdout(`Nothing to restore: main already matches snapshot #${outcome.snapshot}.\n`)
      return EXIT_OK
    case 'changed-since':
      io.stderr(
        `Not restored: since snapshot #${outcome.snapshot} these were changed outside eitri calls (by you?): ${[...outcome.paths, ...outcome.refs].join(', ')}\nNothing changed. Name the other paths, or run again with --force to restore these too.\n`,
      )
      return EXIT_FAILURE
    case 'changed-on-disk':
      io.stderr(
        `Not restored: these files changed on disk meanwhile: ${outcome.paths.join(', ')}\nNothing changed; run it again.\n`,
      )
      return EXIT_FAILURE
    case 'protected':
      io.stderr(
        `Not restored: the workspace's policy refuses writing these paths now, nothing changed:\n${outcome.refused.map((refused) => `  ${refused.path}: ${refused.reason}`).join('\n')}\nName the other paths to restore them.\n`,
      )
      return EXIT_FAILURE
  }
}
