/**
 * What the kept-layer tests share: where a fork's layer folder lies in a scratch state folder,
 * what a shell answer printed, and a short wait for removals done by another process.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import type { Scratch } from './scratch.ts'

/** What a command printed, without the exit line a shell answer ends with. */
export const printed = (answer: { content: string }): string =>
  `${answer.content.replace(/\n*\[exit 0\]$/, '')}\n`

/** The layer folder of the fork with id `id` (the workspace's state folder is named after it). */
export async function layerFolder(scratch: Scratch, id: string): Promise<string> {
  const workspaces = path.join(scratch.stateDir, 'workspaces')
  const [own] = await fs.readdir(workspaces)
  assert.ok(own !== undefined, 'the workspace has a state folder')
  return path.join(workspaces, own, 'forks', id, 'jail')
}

/** Waits (briefly) until `check` holds; `rm` runs in a process of its own. */
export async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let tries = 0; tries < 100 && !check(); tries++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  assert.ok(check(), what)
}
