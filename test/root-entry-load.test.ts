/**
 * The root entry loads without the heavy optional parts: PostgreSQL's client, the isolate
 * engine (a native addon) and the shell parser (WebAssembly) load when first used, so a
 * library user who only defines tools pays for none of them.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { it } from 'node:test'
import { fileURLToPath } from 'node:url'

const ENTRY = fileURLToPath(new URL('../src/index.ts', import.meta.url))

/** Every module the child resolves while importing `entry`, by URL. */
const WATCH = `
import { registerHooks } from 'node:module'
const seen = []
registerHooks({ resolve(specifier, context, next) { const found = next(specifier, context); seen.push(found.url); return found } })
await import(process.argv[1])
process.stdout.write(JSON.stringify(seen))
`

function resolvedBy(entry: string): string[] {
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', WATCH, entry], {
    encoding: 'utf8',
  })
  return JSON.parse(output) as string[]
}

const HEAVY = /\/node_modules\/(pg|isolated-vm|web-tree-sitter)\//

it('imports no PostgreSQL client, isolate engine or shell parser', () => {
  const resolved = resolvedBy(ENTRY)
  // The control: the hook sees what the entry loads (zod, which every tool's schema needs).
  assert.ok(
    resolved.some((url) => url.includes('/node_modules/zod/')),
    'the hook saw the entry load',
  )
  assert.deepEqual(
    resolved.filter((url) => HEAVY.test(url)),
    [],
  )
})
