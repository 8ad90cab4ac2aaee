/**
 * @module confine/scratch-folder
 * The fresh folder each confined call gets, removed afterwards whatever happened.
 */
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { ownedPrefix } from '../util/owned-folders.ts'

/**
 * Creates a fresh, private (0700) scratch folder and answers its real path. Its name records
 * this process, so a folder a killed process left is swept by the next eitri.
 */
export async function createScratchFolder(temporaryRoot: string = os.tmpdir()): Promise<string> {
  return fs.realpath(await fs.mkdtemp(ownedPrefix('confine', temporaryRoot)))
}

/**
 * Removes a scratch folder and everything in it. A function may have left folders it cannot
 * be entered or emptied (mode 000): those are opened up first and the removal tried again.
 */
export async function removeScratchFolder(folder: string): Promise<void> {
  try {
    await fs.rm(folder, { recursive: true, force: true })
  } catch {
    await openUp(folder)
    await fs.rm(folder, { recursive: true, force: true })
  }
}

async function openUp(folder: string): Promise<void> {
  await fs.chmod(folder, 0o700).catch(() => undefined)
  const entries = await fs.readdir(folder, { withFileTypes: true }).catch(() => [])
  for (const entry of entries) {
    if (entry.isDirectory()) await openUp(path.join(folder, entry.name))
  }
}
