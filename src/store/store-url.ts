/**
 * @module store/store-url
 * What `--store` and `EITRI_STORE` accept: `sqlite:PATH` (or `sqlite::memory:`) and
 * `postgres://…` / `postgresql://…`.
 */
import path from 'node:path'
import { EitriError } from '../errors/eitri-error.ts'

/** A parsed store location. */
export type StoreLocation =
  | { readonly backend: 'sqlite'; readonly file: string }
  | { readonly backend: 'postgres'; readonly url: string }

/** The store file of a workspace state folder, when no store is named. */
export const DEFAULT_STORE_FILE = 'store.sqlite'

/**
 * Parses a store URL. A relative SQLite path is taken from `cwd`.
 *
 * @throws EitriError `config_invalid` naming the accepted forms.
 * @example
 * parseStoreUrl('sqlite:state/eitri.sqlite') // { backend: 'sqlite', file: '/cwd/state/eitri.sqlite' }
 */
export function parseStoreUrl(url: string, cwd: string = process.cwd()): StoreLocation {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '')
    if (file === ':memory:') return { backend: 'sqlite', file }
    if (file !== '') return { backend: 'sqlite', file: path.resolve(cwd, file) }
  }
  if (/^postgres(ql)?:\/\/[^/]/.test(url)) {
    try {
      new URL(url)
      return { backend: 'postgres', url }
    } catch {
      // fall through to the message below
    }
  }
  throw new EitriError(
    'config_invalid',
    `--store (or EITRI_STORE) takes sqlite:PATH, sqlite::memory: or postgres://USER:PASSWORD@HOST:PORT/DATABASE; got ${JSON.stringify(url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@'))}.`,
  )
}
