import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { ERROR_CODES, EitriError } from './eitri-error.ts'

/** Every source file of eitri, tests left out. */
function sources(folder: string): string[] {
  return fs.readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const at = path.join(folder, entry.name)
    if (entry.isDirectory()) return sources(at)
    return /\.m?ts$/.test(entry.name) && !entry.name.includes('.test.') ? [at] : []
  })
}

describe('error codes', () => {
  it('each says what it means, and each is used somewhere', () => {
    const code = sources(path.join(import.meta.dirname, '..'))
      .filter((file) => !file.endsWith('eitri-error.ts'))
      .map((file) => fs.readFileSync(file, 'utf8'))
      .join('\n')
    for (const [name, meaning] of Object.entries(ERROR_CODES)) {
      assert.match(meaning, /^[a-z`].*\.$/s, `${name}: a sentence saying what it means`)
      assert.ok(code.includes(`'${name}'`), `${name} is listed but no code uses it; remove it`)
    }
  })

  it('are what an EitriError carries, recognised across copies of the module', () => {
    const error = new EitriError('not_found', 'File not found: a.txt')
    assert.equal(error.code, 'not_found')
    assert.ok(EitriError.isInstance(error))
    assert.ok(!EitriError.isInstance(new Error('plain')))
  })
})
