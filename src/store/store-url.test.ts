import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { EitriError } from '../errors/eitri-error.ts'
import { parseStoreUrl } from './store-url.ts'

describe('parseStoreUrl', () => {
  it('reads SQLite paths, relative to cwd, and memory', () => {
    assert.deepEqual(parseStoreUrl('sqlite:/var/eitri/s.db'), {
      backend: 'sqlite',
      file: '/var/eitri/s.db',
    })
    assert.deepEqual(parseStoreUrl('sqlite:state/s.db', '/home/ada'), {
      backend: 'sqlite',
      file: '/home/ada/state/s.db',
    })
    assert.deepEqual(parseStoreUrl('sqlite:///var/s.db'), { backend: 'sqlite', file: '/var/s.db' })
    assert.deepEqual(parseStoreUrl('sqlite::memory:'), { backend: 'sqlite', file: ':memory:' })
  })

  it('reads PostgreSQL URLs of both schemes', () => {
    for (const url of ['postgres://u:p@db:5432/eitri', 'postgresql://db/eitri']) {
      assert.deepEqual(parseStoreUrl(url), { backend: 'postgres', url })
    }
  })

  it('refuses anything else with the accepted forms, never echoing a password', () => {
    for (const url of ['', 'sqlite:', 'mysql://u:secret@db/x', '/tmp/store.db', 'postgres://']) {
      assert.throws(
        () => parseStoreUrl(url),
        (error) =>
          EitriError.isInstance(error) &&
          error.code === 'config_invalid' &&
          /sqlite:PATH/.test(error.message) &&
          !error.message.includes('secret'),
      )
    }
  })
})
