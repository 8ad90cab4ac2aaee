/**
 * Every named type a public declaration uses is exported by some entry: the check emits the
 * declarations a user gets (with the build's options, so `@internal` members are left out) and
 * reports each type of eitri's own that none of the entries exports. The fixture shows the
 * check finds such a type, also one TypeScript infers, and is satisfied once it is exported.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { ENTRIES } from './helpers/entry-exports.ts'
import { checkPublicApi } from './helpers/forgotten-exports.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const BUILD_CONFIG = `${ROOT}tsconfig.build.json`
/** The fixture needs no Node types; reading them would double the check's time. */
const NO_NODE = { types: [] }
const FIXTURE = fileURLToPath(new URL('fixtures/forgotten-export/', import.meta.url))

describe('public API', () => {
  it('the check finds a forgotten type, and is content once it is exported', () => {
    const forgotten = checkPublicApi(FIXTURE, [`${FIXTURE}entry.ts`], BUILD_CONFIG, NO_NODE)
    assert.deepEqual(forgotten.diagnostics, [])
    assert.deepEqual(
      forgotten.forgotten.map((found) => `${found.name} ← ${found.usedBy}`),
      ['Bolt ← spare (entry.ts)', 'Part ← Widget (entry.ts)'],
    )
    const complete = checkPublicApi(
      FIXTURE,
      [`${FIXTURE}entry.ts`, `${FIXTURE}complete.ts`],
      BUILD_CONFIG,
      NO_NODE,
    )
    assert.deepEqual(complete.forgotten, [])
  })

  it("every type eitri's entries use is exported by one of them", () => {
    const entries = Object.values(ENTRIES).map((file) => `${ROOT}${file}`)
    const check = checkPublicApi(`${ROOT}src`, entries, BUILD_CONFIG)
    assert.deepEqual(check.diagnostics, [])
    // The control: the check read the entries (defineTool and its types among them).
    assert.ok(check.exported['index.ts']?.includes('ToolContext'))
    assert.deepEqual(
      check.forgotten.map((found) => `${found.name} (${found.declaredIn}) ← ${found.usedBy}`),
      [],
      'export these types from the entry where the type using them is exported, or mark the member that uses them @internal',
    )
  })
})
