/**
 * dist/ holds no test-only code unless the `eitri/testing` entry reaches it: the build's file
 * list (what `tsc -p tsconfig.build.json` compiles, read without building) has no tests, and
 * each test support file in it (named `test-*.ts` or loading `node:test`) is one the testing
 * entry imports. The entries a program runs (the other entries and the CLI) reach none.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { ENTRIES } from './helpers/entry-exports.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const SRC = path.join(ROOT, 'src')
const TESTING = path.join(ROOT, ENTRIES['eitri/testing'] as string)

const config = ts.getParsedCommandLineOfConfigFile(
  path.join(ROOT, 'tsconfig.build.json'),
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
    },
  },
)
if (!config) throw new Error('cannot read tsconfig.build.json')
const options = config.options
const build = ts.createProgram({ rootNames: config.fileNames, options })

/** The source files of src/ a program over `rootNames` compiles (they and all they import). */
function reached(rootNames: string[]): string[] {
  return ts
    .createProgram({ rootNames, options, oldProgram: build })
    .getSourceFiles()
    .map((file) => path.resolve(file.fileName))
    .filter((file) => file.startsWith(SRC + path.sep))
}

/** Whether a file is test-only: a test, a `test-*` support file, or one that loads node:test. */
function testOnly(file: string): boolean {
  const name = path.basename(file)
  return (
    name.endsWith('.test.ts') ||
    name.startsWith('test-') ||
    /\bfrom\s+['"]node:test['"]/.test(fs.readFileSync(file, 'utf8'))
  )
}

const relative = (files: string[]) => files.map((file) => path.relative(SRC, file)).sort()

describe('build files', () => {
  const built = reached(config.fileNames)
  const forTesting = new Set(reached([TESTING]))
  const strays = (files: string[]) =>
    files.filter((file) => testOnly(file) && !forTesting.has(file))

  it('builds every entry, the CLI and the jail supervisor', () => {
    const expected = [
      ...Object.values(ENTRIES).map((file) => path.join(ROOT, file)),
      path.join(SRC, 'cli', 'eitri-main.ts'),
      path.join(SRC, 'jail', 'jail-supervisor-main.mjs'),
    ]
    assert.deepEqual(
      expected.filter((file) => !built.includes(file)),
      [],
    )
  })

  it('holds no test-only file the testing entry does not reach', () => {
    assert.deepEqual(relative(built.filter((file) => file.endsWith('.test.ts'))), [])
    assert.deepEqual(
      relative(strays(built)),
      [],
      'exclude it in tsconfig.build.json, or stop importing it',
    )
  })

  it('the entries a program runs reach no test-only file', () => {
    const running = [
      ...Object.entries(ENTRIES)
        .filter(([entry]) => entry !== 'eitri/testing')
        .map(([, file]) => path.join(ROOT, file)),
      path.join(SRC, 'cli', 'eitri-main.ts'),
    ]
    assert.deepEqual(relative(reached(running).filter(testOnly)), [])
  })

  it('the check sees test support (the testing entry reaches some, and the build has it)', () => {
    const shipped = relative(built.filter(testOnly))
    for (const file of ['store/store-contract.ts', 'tool/test-context.ts']) {
      assert.ok(shipped.includes(file), `${file} is test support in the build`)
    }
    // Without `test-*.ts` in the exclusions, the build would take support files nothing ships.
    const support = fs
      .readdirSync(SRC, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.startsWith('test-'))
      .map((entry) => path.join(entry.parentPath, entry.name))
    const unexcluded = reached([...config.fileNames, ...support])
    assert.ok(strays(unexcluded).length > 0, 'the check would see them')
  })
})
