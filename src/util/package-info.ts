/**
 * @module util/package-info
 * The package's own name and version, read once from its package.json (two folders up both
 * from `src/util` and from `dist/util`).
 */
import { readFileSync } from 'node:fs'

interface PackageInfo {
  readonly name: string
  readonly version: string
}

/** The name and version of this copy of eitri. */
export const packageInfo: PackageInfo = (() => {
  const json = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as PackageInfo
  return Object.freeze({ name: json.name, version: json.version })
})()
