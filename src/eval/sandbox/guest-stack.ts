/**
 * @module eval/sandbox/guest-stack
 * Keeps only the guest's own frames of a stack trace (never the prelude's, the wrapper's or
 * isolated-vm's), with lines and columns of the code the guest sent.
 */
import type { PositionMap } from './position-map.ts'

const FRAME = /^(\s+at (?:.*? \()?)<eval>:(\d+):(\d+)(\)?)$/

/** The frames of `stack` that point into the guest's code, one per line. */
export function guestStack(stack: string, positions: PositionMap): string {
  const frames: string[] = []
  for (const line of stack.split('\n')) {
    const match = FRAME.exec(line)
    if (match === null) continue
    const original = positions.original(Number(match[2]), Number(match[3]))
    if (original === undefined) continue
    frames.push(`${match[1] ?? ''}<eval>:${original.line}:${original.column}${match[4] ?? ''}`)
    if (frames.length >= 50) break
  }
  return frames.join('\n')
}
