/**
 * @module confine/child/runner-path
 * Where the child runner and eitri's own package live on the host, for spawning the runner and
 * for binding it into the jail. Works from `src/` (`.ts`) and from the built `dist/` (`.js`).
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = fileURLToPath(import.meta.url)

/** The host path of `confined-main`, with this file's own extension. */
export const RUNNER_PATH = path.join(path.dirname(here), `confined-main${path.extname(here)}`)

/** The root of the package a file belongs to: the nearest folder above it with a package.json. */
export function packageRootOf(file: string): string {
  let folder = path.dirname(file)
  for (;;) {
    if (existsSync(path.join(folder, 'package.json'))) return folder
    const parent = path.dirname(folder)
    if (parent === folder) return path.dirname(file)
    folder = parent
  }
}
