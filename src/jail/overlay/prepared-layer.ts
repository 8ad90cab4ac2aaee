/**
 * @module jail/overlay/prepared-layer
 * A command's overlay mounted ahead of it on a warm jail's point: in the same exchange with
 * the layer host that unmounts the previous command's overlay, or while the jail waits. The
 * mount is fresh (a new upper layer, never one a command used) and nothing reaches it until
 * its command starts; it is taken only while what it was mounted from still holds (the same
 * lower layers, the same private paths covered, no kept path to yield), else it is unmounted
 * and a fresh one mounted in its place.
 */
import fs from 'node:fs'
import path from 'node:path'
import { overlayWords } from './layer-host.ts'
import type { Cover } from './private-covers.ts'

/** The empty folder below a read-only overlay of the workspace alone (see {@link pendingLayer}). */
export const EMPTY_LOWER = 'empty'

/** A layer's mount made ready: its folders, the host request that mounts it, its lease. */
export interface PendingLayer {
  readonly mountPoint: string
  readonly upper: string | undefined
  readonly folder: string
  /** The layer host request that mounts it (an overlay). */
  readonly request: readonly string[]
  /** Its lower layers, as the overlay's options name them. */
  readonly lowers: string
  readonly writable: boolean
  /** Lets go of the fork layer it reads, once unmounted. */
  readonly release?: () => void
}

/** A layer mounted ahead: what it was made from, to compare when its command comes. */
export interface PreparedLayer {
  readonly pending: PendingLayer
  /** The private paths covered on it and with what, as {@link coverKey} writes them. */
  readonly covers: string
}

/** Covers in a form two plans compare by. */
export function coverKey(covers: readonly Cover[]): string {
  return JSON.stringify(covers.map((cover) => [cover.target, cover.source]))
}

/**
 * Makes a new layer's folders (a writable one's upper layer gets the workspace root's bits and
 * the jail's owner: it is the overlay's root), takes its fork lease, and writes the request
 * that mounts it on `mountPoint`.
 */
export function pendingLayer(options: {
  readonly mountPoint: string
  readonly writable: boolean
  /** The layer's folder, as the host names it, and as the overlay's options name it. */
  readonly folder: string
  readonly mounted: string
  /** The lower layers, top first, asked once the fork's lease is taken. */
  readonly lowers: () => string[]
  readonly lease: () => { readonly release: () => void } | undefined
  readonly rootMode: number
  readonly owner?: { readonly uid: number; readonly gid: number }
  readonly options: string
}): PendingLayer {
  const { mountPoint, writable, folder, mounted } = options
  fs.mkdirSync(folder, { mode: 0o700 })
  const fork = options.lease()
  const lowers = options.lowers()
  const lower = lowers.join(':')
  const base = { mountPoint, folder, lowers: lower, writable }
  const release = fork === undefined ? {} : { release: fork.release }
  if (!writable) {
    // Always an overlay, never a bind of the workspace: through a bind the jail reaches the
    // host's own files, so a read-only command connected to a unix socket a host program
    // listens on in the workspace, and wrote into its named pipes (jail-attack-classes §11).
    // The overlay's files are its own: a socket or a pipe below leads nowhere; and a bind's line
    // in /proc/self/mountinfo names its root, the workspace's host path, where an overlay's
    // names only the layers' neutral paths. It needs an upper layer or two lower ones, so a
    // lone workspace gets an empty one below it.
    let overlayLowers = lower
    if (lowers.length === 1) {
      fs.mkdirSync(path.join(folder, EMPTY_LOWER), { mode: 0o500 })
      overlayLowers = `${lower}:${path.join(mounted, EMPTY_LOWER)}`
    }
    const request = overlayWords({
      lower: overlayLowers,
      target: mountPoint,
      options: options.options,
    })
    return { ...base, upper: undefined, request, ...release }
  }
  const upper = path.join(folder, 'upper')
  fs.mkdirSync(upper, { mode: 0o700 })
  fs.chmodSync(upper, options.rootMode & 0o777)
  if (options.owner !== undefined) fs.chownSync(upper, options.owner.uid, options.owner.gid)
  fs.mkdirSync(path.join(folder, 'work'), { mode: 0o700 })
  const request = overlayWords({
    lower,
    upper: path.join(mounted, 'upper'),
    work: path.join(mounted, 'work'),
    target: mountPoint,
    options: options.options,
  })
  return { ...base, upper, request, ...release }
}

/**
 * Whether an upper layer holds nothing: the command changed nothing, so bringing it back
 * changes no lower layer, and a layer mounted ahead for the next command stays valid.
 */
export function isEmptyLayer(upper: string | undefined): boolean {
  if (upper === undefined) return true
  try {
    return fs.readdirSync(upper).length === 0
  } catch {
    return false
  }
}
