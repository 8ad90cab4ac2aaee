/**
 * A project as a user has one: a scratch workspace holding files committed in a git
 * repository, and a workshop on it whose jail runs.
 */
import assert from 'node:assert/strict'
import { openWorkshop, type Workshop, type WorkshopOptions } from '../../src/workshop/workshop.ts'
import { gitOk } from './git-repository.ts'
import { makeScratch, type Scratch } from './scratch.ts'

/** A scratch workspace holding `files`, committed as the first commit of branch `main`. */
export async function committedProject(files: Record<string, string>): Promise<Scratch> {
  const scratch = await makeScratch(files)
  gitOk(scratch.workspace, ['init', '-q', '-b', 'main'])
  gitOk(scratch.workspace, ['add', '-A'])
  gitOk(scratch.workspace, ['commit', '-q', '-m', 'first'])
  return scratch
}

/** A workshop on `scratch`; the test fails, naming the fix, when the jail cannot run here. */
export async function openJailedWorkshop(
  scratch: Scratch,
  options: Partial<WorkshopOptions> = {},
): Promise<Workshop> {
  const workshop = await openWorkshop({
    workspace: scratch.workspace,
    stateDir: scratch.stateDir,
    configPath: scratch.configPath,
    ...options,
  })
  const jail = await workshop.jail.availability()
  assert.ok(
    jail.available,
    jail.available ? '' : `install bubblewrap: apt-get install bubblewrap (${jail.reason})`,
  )
  return workshop
}
