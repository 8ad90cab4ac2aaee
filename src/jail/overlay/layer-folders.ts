/**
 * @module jail/overlay/layer-folders
 * The folders an overlay workspace owns on the host: a fork's folder under eitri's state
 * claimed for its kept layer, a new layer's clock, and a layer's removal.
 */
import fs from 'node:fs'
import path from 'node:path'
import { ForkKeepFolder } from './fork-keep.ts'
import type { ForkBelow } from './fork-layer.ts'

/**
 * Removes a layer's folder. The overlay leaves a folder of mode 0 in its work folder, which a
 * caller that is not root must open up first. `depth` is how many levels of layers' folders
 * lie below (the command layers' folder holds one per command): only there is a work folder
 * the overlay's; deeper lies what programs made (an upper layer), where a `work/work` may be
 * a link a `chmod` would follow.
 */
export function removeLayer(folder: string, depth = 0): void {
  try {
    // A kept layer may hold a `work/work` a program made: nothing is opened through a link.
    const work = path.join(folder, 'work')
    const stuck = path.join(work, 'work')
    if (fs.lstatSync(work).isDirectory() && fs.lstatSync(stuck).isDirectory())
      fs.chmodSync(stuck, 0o700)
  } catch {
    // none, or not ours to open
  }
  try {
    fs.rmSync(folder, { recursive: true, force: true })
  } catch (error) {
    if (depth === 0) throw error
    // a layer below: each layer's folder is removed on its own
    for (const name of fs.existsSync(folder) ? fs.readdirSync(folder) : []) {
      removeLayer(path.join(folder, name), depth - 1)
    }
    fs.rmSync(folder, { recursive: true, force: true })
  }
}

/**
 * Now, as the file system stamps change times: the change time of a folder just made. A
 * workspace entry whose change time is later changed after this moment.
 */
export function changeClock(folder: string): number {
  const marker = path.join(folder, 'started')
  fs.writeFileSync(marker, '')
  return fs.statSync(marker).ctimeMs
}

/**
 * Claims a fork's folder under eitri's state for its kept layer: the folder, or why the layer
 * stays in the temporary folder (gone when this process ends); undefined for main.
 */
export function claimKeep(
  fork: ForkBelow | undefined,
  mainRoot: string,
): ForkKeepFolder | { readonly reason: string } | undefined {
  if (fork === undefined) return undefined
  if (fork.keep === undefined)
    return { reason: 'no folder of the fork keeps it: a merged fork is read-only' }
  try {
    return ForkKeepFolder.claim(fork.keep, mainRoot)
  } catch (error) {
    return { reason: `its folder in eitri's state cannot be used: ${(error as Error).message}` }
  }
}
