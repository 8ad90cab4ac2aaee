/**
 * @module tools/shell/shell-output-tool
 * `shell_output`: what a background job printed since the last read.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { defineTool } from '../../tool/define-tool.ts'
import type { JobRead } from '../../ports/program-session.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { NETWORK_NOTE, networkNote } from '../../bubblewrap/network-note.ts'
import { programsOf, shellAvailability } from './shell-tool.ts'

/** Reads a background job's new output. */
export const shellOutputTool = defineTool({
  name: 'shell_output',
  description:
    'Read what a background shell job printed since the last read, and whether it still runs.',
  availability: shellAvailability,
  parameters: z.object({
    id: z.string().min(1).describe('The job id that shell returned, such as job-1.'),
  }),
  async execute({ id }, ctx) {
    const read = (await programsOf(ctx)).readJob(id)
    if (read === undefined) throw unknownJob(id)
    return toolSuccess(formatJob(read), { id, running: read.running, exitCode: read.exitCode })
  },
})

/** A job's read as text. */
export function formatJob(read: JobRead): string {
  const parts: string[] = []
  if (read.stdout !== '') parts.push(read.stdout.replace(/\n$/, ''))
  if (read.stderr !== '') parts.push(`stderr:\n${read.stderr.replace(/\n$/, '')}`)
  if (parts.length === 0) parts.push('(no new output)')
  parts.push(
    read.running
      ? `[${read.id} is running]`
      : `[${read.id} exited${read.exitCode === null ? ' (killed)' : ` with ${read.exitCode}`}]`,
  )
  // A job runs in the jail: one that failed for want of the network says so, as shell does,
  // also when the failure was read while it still ran.
  const network = read.running
    ? undefined
    : read.wantedNetwork === true && read.exitCode !== 0
      ? NETWORK_NOTE
      : networkNote(read)
  if (network !== undefined) parts.push(network)
  return parts.join('\n\n')
}

/** The error for an id this session does not know. */
export function unknownJob(id: string): EitriError {
  return new EitriError(
    'not_running',
    `No background job ${id} in this session: it never existed or was already killed. Start one with shell {"background": true}.`,
  )
}
