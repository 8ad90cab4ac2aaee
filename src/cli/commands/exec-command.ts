/**
 * @module cli/commands/exec-command
 * `eitri exec -- CMD…`: one command in the jail, run by the person at the terminal, its output
 * streamed live; eitri exits with the command's status.
 */
import os from 'node:os'
import type { CliIo } from '../cli-io.ts'
import { UsageError } from '../cli-io.ts'
import type { CommandLine } from '../parse-command-line.ts'
import { enclosingRepositoryNote } from '../enclosing-repository.ts'
import { openFromCommandLine } from './open-from-command-line.ts'
import { MAIN_LINE } from '../../ports/line-control.ts'
import { NETWORK_NOTE_FOR_PERSON, wantedNetwork } from '../../bubblewrap/network-note.ts'

/** Exit status when the jail killed the command (as shells report 128 + SIGKILL). */
const EXIT_KILLED = 137

/** How much of one chunk's end is kept to find a message cut between two chunks. */
const NETWORK_WATCH_CHARS = 64

/** Runs the command; returns its exit status. */
export async function execCommand(
  line: CommandLine,
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  if (line.positionals.length === 0) {
    throw new UsageError('exec needs a command after --, such as: eitri exec -- ls -la')
  }
  await using workshop = await openFromCommandLine(line)
  const note = enclosingRepositoryNote(line.workspace ?? '.')
  if (note !== undefined) io.stderr(note)
  const jail = line.fork === undefined ? workshop.jail : await workshop.jailOf(line.fork)
  // The jail's probe (one bubblewrap on an empty folder, which changes nothing) runs while main
  // is snapshotted, not after; the command's start waits for it, and reports what it found.
  jail.availability().catch(() => undefined)
  // Whether the command's output showed it wanted the network (npm's ENOTCACHED), read across
  // chunks by keeping the end of the last one.
  let wanted = false
  let last = ''
  const watch = (text: string): void => {
    if (!wanted && wantedNetwork(last + text)) wanted = true
    last = text.slice(-NETWORK_WATCH_CHARS)
  }
  const run = async () => {
    const job = await jail.start(
      {
        command: line.positionals,
        access: 'workspace-write',
        maxOutputChars: 0,
        signal,
        onOutput: (stream, chunk) => {
          const text = chunk.toString()
          watch(text)
          ;(stream === 'stdout' ? io.stdout : io.stderr)(text)
        },
      },
      { oneShot: true },
    )
    // Our reader went away (`eitri exec -- yes | head -1`): the command ends as in a shell's
    // pipeline, by SIGPIPE, and eitri exits 141, what bash reports for `yes` in `yes | head -1`
    // (`PIPESTATUS`, `pipefail`); a command that ignores SIGPIPE gets EPIPE at its next write
    // and ends as it chooses. Not a kill of the jail, which read 137 ("out of memory?").
    const closeStdout = (): void => job.process.endAsPipeline()
    io.stdoutClosed?.addEventListener('abort', closeStdout, { once: true })
    if (io.stdoutClosed?.aborted === true) closeStdout()
    try {
      return await job.finished
    } finally {
      io.stdoutClosed?.removeEventListener('abort', closeStdout)
    }
  }
  // On main, the command runs between snapshots of it, so what it did can be restored.
  const result =
    line.fork === undefined || line.fork === MAIN_LINE
      ? await workshop.lines.snapshots.around(
          { tool: 'eitri exec', detail: line.positionals.join(' '), session: 'cli' },
          run,
        )
      : await run()
  // The notes the shell tool gives a model (format-run.ts), in the same words.
  for (const refused of result.sync?.refused ?? [])
    io.stderr(`eitri: not written back: ${refused.path}: ${refused.reason}\n`)
  for (const kept of result.sync?.kept ?? [])
    io.stderr(`eitri: kept in the jail: ${kept.path}: ${kept.reason}\n`)
  for (const hidden of result.sync?.hidden ?? [])
    io.stderr(`eitri: not shown in the jail: ${hidden.path}: ${hidden.reason}\n`)
  if (wanted && result.exitCode !== 0) io.stderr(NETWORK_NOTE_FOR_PERSON)
  return result.exitCode ?? signalStatus(result.signal)
}

/** A shell's status for a program a signal ended: 128 + its number (137 when unknown). */
function signalStatus(signal: string | null): number {
  const number = signal === null ? undefined : os.constants.signals[signal as NodeJS.Signals]
  return number === undefined ? EXIT_KILLED : 128 + number
}
