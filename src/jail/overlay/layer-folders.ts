/**
 * @module jail/overlay/layer-folders
 * The folders an overlay workspace owns on the host: its temporary folder (mount points, the
 * workspace's neutral path, the closed placeholders), a fork's folder under eitri's state
 * claimed for its kept layer, a new layer's clock, and a layer's removal.
 */
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { ownedPrefix } from '../../util/owned-folders.ts'
import { chmodPinned } from '../pinned-folder.ts'
import { ForkKeepFolder } from './fork-keep.ts'
import type { ForkBelow } from './fork-layer.ts'

/**
 * Removes a layer's folder. The overlay leaves a folder of mode 0 in its work folder, which a
 * caller that is not root must open up first. `depth` is how many levels of layers' folders
 * lie below (the command layers' folder holds one per command): only there is a work folder
 * the overlay's; deeper lies what programs made (an upper layer), where a `work/work` may be
 * a link a `chmod` would follow. Asynchronous: each folder removed waits for the disk (about
 * 1.5 ms a folder on the VM measured, little of it CPU), which held a back-to-back job's path
 * while it was synchronous. A command's layer that holds nothing goes folder by folder: the
 * recursive removal's walk costs several times the CPU of those few removals.
 */
export async function removeLayer(folder: string, depth = 0): Promise<void> {
  if (depth === 0 && (await removeEmptyLayer(folder))) return
  try {
    // A kept layer may hold a `work/work` a program made: nothing is opened through a link.
    const work = path.join(folder, 'work')
    const stuck = path.join(work, 'work')
    if ((await fsp.lstat(work)).isDirectory())
      chmodPinned(
        Buffer.from(stuck),
        (stat) => stat.isDirectory(),
        () => 0o700,
      )
  } catch {
    // none, or not ours to open
  }
  try {
    await fsp.rm(folder, { recursive: true, force: true })
  } catch (error) {
    if (depth === 0) throw error
    // a layer below: each layer's folder is removed on its own
    const names = await fsp.readdir(folder).catch(() => [])
    for (const name of names) await removeLayer(path.join(folder, name), depth - 1)
    await fsp.rm(folder, { recursive: true, force: true })
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

/** Where an overlay workspace's layers live, as the host names them and as the overlay's options do. */
export interface LayerRoot {
  /** The workspace's own temporary folder: mount points, the workspace's neutral path, covers. */
  readonly root: string
  /** A fork's folder claimed under eitri's state, why it could not be, or undefined for main. */
  readonly keep: ForkKeepFolder | { readonly reason: string } | undefined
  /** The kept layer and the command layers' folder, as the host names them. */
  readonly keptFolder: string
  readonly layersFolder: string
  /** The same, as the overlay's options name them (neutral: the jail can read its mounts). */
  readonly keptMounted: string
  readonly layersMounted: string
}

/**
 * Makes an overlay workspace's temporary folder below `temporaryRoot` and claims a fork's
 * folder for its kept layer (see {@link claimKeep}); the kept layer and the command layers
 * live in the fork's folder when it is claimed, else in the temporary folder.
 */
export function makeLayerRoot(options: {
  readonly temporaryRoot: string
  readonly fork: ForkBelow | undefined
  readonly mainRoot: string
}): LayerRoot {
  const root = fs.mkdtempSync(ownedPrefix('layers', options.temporaryRoot))
  // Passable, not listable: the jail's user reaches its mount points by name only.
  fs.chmodSync(root, 0o711)
  for (const folder of ['lower', 'points']) fs.mkdirSync(path.join(root, folder))
  fs.chmodSync(path.join(root, 'points'), 0o711)
  const keep = claimKeep(options.fork, options.mainRoot)
  let folders: Omit<LayerRoot, 'root' | 'keep'>
  if (keep instanceof ForkKeepFolder) {
    // The fork's folder is bound at a neutral path (below), so the overlay's options, which
    // the jail can read in its mount table, never name eitri's state folder.
    fs.mkdirSync(path.join(root, 'keep'))
    folders = {
      keptFolder: keep.kept,
      layersFolder: keep.layers,
      keptMounted: path.join(root, 'keep', path.basename(keep.kept)),
      layersMounted: path.join(root, 'keep', path.basename(keep.layers)),
    }
  } else {
    const kept = path.join(root, 'kept')
    const layers = path.join(root, 'layers')
    folders = { keptFolder: kept, layersFolder: layers, keptMounted: kept, layersMounted: layers }
    fs.mkdirSync(kept)
    fs.mkdirSync(layers, { mode: 0o700 })
  }
  // What private paths are covered with (bound read-only): a folder that lists as empty, so tree
  // walkers (`find`, `node --test`) pass over it; a file nothing may read, not even its owner.
  fs.mkdirSync(path.join(root, 'closed-folder'), { mode: 0o555 })
  fs.chmodSync(path.join(root, 'closed-folder'), 0o555)
  fs.writeFileSync(path.join(root, 'closed-file'), '', { mode: 0o000 })
  fs.chmodSync(path.join(root, 'closed-file'), 0o000)
  return { root, keep, ...folders }
}

/** Removes a layer's folder that holds only its empty upper and work folders; false otherwise. */
async function removeEmptyLayer(folder: string): Promise<boolean> {
  try {
    // rmdir follows no link and removes no folder that holds anything.
    for (const inner of ['upper', 'work/work', 'work', 'empty']) {
      await fsp.rmdir(path.join(folder, inner)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error
      })
    }
    await fsp.rmdir(folder)
    return true
  } catch {
    return false
  }
}

/**
 * Removes what {@link makeLayerRoot} made in the temporary folder, once the layer host is
 * gone: the placeholders, the unused mount points, then the folders if empty.
 */
export async function removeLayerRoot(root: string): Promise<void> {
  for (const placeholder of ['closed-folder', 'closed-file']) {
    // Opened up first: a caller that is not root cannot list a folder of mode 0 to empty it.
    try {
      await fsp.chmod(path.join(root, placeholder), 0o700)
      await fsp.rm(path.join(root, placeholder), { recursive: true, force: true })
    } catch {
      // gone already
    }
  }
  for (const folder of ['points', 'lower', 'keep']) {
    const at = path.join(root, folder)
    const names = folder === 'points' ? await fsp.readdir(at).catch(() => []) : []
    for (const name of names) await removeMountPoint(path.join(at, name))
    await fsp.rmdir(at).catch(() => undefined) // left rather than removed recursively
  }
  await fsp.rmdir(root).catch(() => undefined) // left rather than removed recursively
}

/**
 * Removes an unused private mount point. Asynchronous: removing a folder that was a mount point
 * in another namespace waits for the kernel to detach those mounts (milliseconds on the event
 * loop when it was synchronous).
 */
export async function removeMountPoint(mountPoint: string): Promise<void> {
  // Still a mount point in some namespace, or gone: left rather than removed recursively.
  await fsp.rmdir(mountPoint).catch(() => undefined)
}
