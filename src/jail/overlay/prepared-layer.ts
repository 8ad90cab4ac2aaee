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

/** A layer's mount made ready: its folders, the host request that mounts it, its lease. */
export interface PendingLayer {
  readonly mountPoint: string
  readonly upper: string | undefined
  readonly folder: string
  /** The layer host request that mounts it (an overlay, or a read-only bind). */
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

/** A private path's cover: where on the overlay, and the closed placeholder bound there. */
export interface Cover {
  readonly target: string
  readonly source: string
}

/** Covers in a form two plans compare by. */
export function coverKey(covers: readonly Cover[]): string {
  return JSON.stringify(covers.map((cover) => [cover.target, cover.source]))
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
