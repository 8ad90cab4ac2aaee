/**
 * @module cli/commands/fork-commands
 * `eitri fork`, `forks`, `diff FORK`, `merge FORK`, `undo-merge`, `discard FORK`, `log [FORK]`:
 * the person at the terminal working the workspace's lines. Running `eitri merge FORK` is
 * itself the person's approval.
 */
import type { CliIo } from '../cli-io.ts'
import { EXIT_FAILURE, EXIT_OK, UsageError } from '../cli-io.ts'
import type { CommandLine } from '../parse-command-line.ts'
import { openFromCommandLine } from './open-from-command-line.ts'

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
      const forks = lines.forks()
      if (line.json) io.stdout(`${JSON.stringify(forks, null, 2)}\n`)
      else if (forks.length === 0) io.stdout('No forks.\n')
      else
        for (const fork of forks)
          io.stdout(
            `${fork.id}  ${(fork.name ?? '-').padEnd(16)}  from ${fork.parent}  ${fork.created}  by ${fork.owner}${fork.readOnly ? '  read-only' : ''}\n`,
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
      const outcome = await lines.merge(need('a fork'))
      if (line.json) io.stdout(`${JSON.stringify(outcome, null, 2)}\n`)
      switch (outcome.type) {
        case 'merged':
          if (!line.json)
            io.stdout(
              `Merged into ${outcome.into}: ${outcome.changes.map((change) => `${change.path} (${change.status})`).join(', ')}\n`,
            )
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
      const outcome = await lines.undoMerge()
      if (outcome.type === 'undone')
        io.stdout(`Undid the last merge: ${outcome.paths.join(', ')}\n`)
      else if (outcome.type === 'nothing') io.stdout('No merge to undo.\n')
      else {
        io.stderr(`Not undone: these files changed since the merge: ${outcome.paths.join(', ')}\n`)
        return EXIT_FAILURE
      }
      return EXIT_OK
    }
    case 'discard':
      await lines.discard(need('a fork'))
      io.stdout(`Discarded ${target}.\n`)
      return EXIT_OK
    case 'log': {
      const log = await lines.log(target ?? 'main')
      if (line.json) io.stdout(`${JSON.stringify(log, null, 2)}\n`)
      else
        for (const entry of log)
          io.stdout(`${entry.commit.slice(0, 10)}  ${entry.time}  ${entry.message}\n`)
      return EXIT_OK
    }
    case undefined:
    default:
      throw new UsageError(`unknown command '${line.command ?? ''}'`)
  }
}
