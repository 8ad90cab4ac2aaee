import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { it } from 'node:test'

it('opens a SQLite store without loading the PostgreSQL client', () => {
  // A child records every module it loads, opens the default kind of store, and prints them.
  const script = `
    import { registerHooks } from 'node:module'
    const loaded = []
    registerHooks({ resolve: (specifier, context, next) => {
      const result = next(specifier, context)
      loaded.push(result.url)
      return result
    } })
    const { openStore } = await import(${JSON.stringify(import.meta.resolve('./open-store.ts'))})
    const store = await openStore('sqlite::memory:')
    await store.tasks('main').create({ title: 'x' })
    await store.close()
    console.log(JSON.stringify(loaded))
  `
  const loaded = JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
  ) as string[]
  assert.ok(loaded.some((url) => url.endsWith('/sqlite-driver.ts')))
  assert.deepEqual(
    loaded.filter((url) => /\/node_modules\/pg|postgres-driver/.test(url)),
    [],
  )
})
