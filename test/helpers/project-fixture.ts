/**
 * A real project for end-to-end tests and benches of the jail: a git repository with committed
 * sources, a `.gitignore` of `node_modules/` and `dist/`, a `node_modules` of a few thousand
 * small files across a few hundred packages (nested dependencies, scoped packages, `.bin`
 * links), sources importing from two of them, two WebAssembly modules written byte by byte,
 * and a `node --test` suite exercising all of it. Only the sources and tests are committed, so
 * only they are in eitri's history and a fork's own files; the packages show through from main.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { GIT_TEST_ENV } from './git-repository.ts'

/** What `makeProjectFixture` built. */
export interface ProjectFixture {
  /** How many files `node_modules` holds (links not counted). */
  readonly packageFiles: number
  /** How many packages `node_modules` holds, nested ones included. */
  readonly packages: number
  /** How many tests the suite has: `# pass` on a clean run. */
  readonly tests: number
  /** The committed source whose edit makes exactly one test fail (see `BROKEN_SUM`). */
  readonly editable: string
}

/**
 * `src/sum.js` with a bug: `total` forgets every value after the third. Exactly one test fails
 * with it (`total adds a list`, of four values); every other total is of three values or fewer.
 */
export const BROKEN_SUM = `import { add } from 'tiny-sum'

/** The sum of a list, but only of its first three values (a bug an agent might write). */
export function total(values) {
  return values.slice(0, 3).reduce((sum, value) => add(sum, value), 0)
}
`

/**
 * A module exporting `add(i32, i32) -> i32`, by hand: the header, a type section (one function
 * type of two i32 to one i32), a function section, an export section (`add`, function 0) and a
 * code section (`local.get 0; local.get 1; i32.add; end`).
 */
export const ADD_WASM = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // \0asm, version 1
  0x01, 0x07, 0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, // type: (i32, i32) -> i32
  0x03, 0x02, 0x01, 0x00, // function 0 of type 0
  0x07, 0x07, 0x01, 0x03, 0x61, 0x64, 0x64, 0x00, 0x00, // export "add" = function 0
  0x0a, 0x09, 0x01, 0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6a, 0x0b, // body
]) // prettier-ignore

/**
 * A module exporting a memory of 1 page (64 KiB) that may grow to 65,536 pages (4 GiB): V8
 * reserves address space for such a memory up front, which an address-space limit (RLIMIT_AS)
 * refuses although the program uses only a page.
 */
export const BIG_MEMORY_WASM = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // \0asm, version 1
  0x05, 0x06, 0x01, 0x01, 0x01, 0x80, 0x80, 0x04, // memory: min 1, max 65536 pages
  0x07, 0x0a, 0x01, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02, 0x00, // export "memory"
]) // prettier-ignore

const PACKAGE_JSON = `${JSON.stringify(
  {
    name: 'real-fixture',
    version: '1.0.0',
    private: true,
    type: 'module',
    scripts: { test: 'node --test' },
    dependencies: { 'tiny-sum': '^2.1.0', '@fixture/pad': '^1.0.0' },
  },
  null,
  2,
)}\n`

/** The committed sources and tests (the wasm modules are written as bytes beside them). */
const SOURCES: Record<string, string> = {
  '.gitignore': 'node_modules/\ndist/\n',
  'package.json': PACKAGE_JSON,
  'README.md': '# real-fixture\n\nA project with dependencies, for eitri’s jail tests.\n',
  'src/sum.js': `import { add } from 'tiny-sum'

/** The sum of a list. */
export function total(values) {
  return values.reduce((sum, value) => add(sum, value), 0)
}
`,
  'src/label.js': `import { padStart } from '@fixture/pad'
import { total } from './sum.js'

/** A right-aligned line: a name and the total of its values. */
export function label(name, values, width = 12) {
  return \`\${name}:\${padStart(String(total(values)), width - name.length - 1)}\`
}
`,
  'src/wasm.js': `import fs from 'node:fs'

/** Instantiates a module of wasm/ by name. */
export async function load(name) {
  const bytes = fs.readFileSync(new URL(\`../wasm/\${name}.wasm\`, import.meta.url))
  const { instance } = await WebAssembly.instantiate(bytes)
  return instance.exports
}
`,
  'src/build.js': `import fs from 'node:fs'
import { label } from './label.js'

/** Writes the build's output to dist/ (ignored, as build outputs are). */
export function build(root) {
  const dist = new URL('dist/', root)
  fs.mkdirSync(dist, { recursive: true })
  const out = new URL('report.txt', dist)
  fs.writeFileSync(out, \`\${label('sum', [1, 2, 3])}\\n\`)
  return out
}
`,
  'test/sum.test.js': `import assert from 'node:assert/strict'
import { test } from 'node:test'
import { add, addAll, version } from 'tiny-sum'
import { total } from '../src/sum.js'

test('total adds a list', () => assert.equal(total([1, 2, 3, 4]), 10))
test('total of nothing is 0', () => assert.equal(total([]), 0))
test('tiny-sum adds two numbers', () => assert.equal(add(2, 3), 5))
test('tiny-sum adds a list through its nested dependency', () => assert.equal(addAll([5, 6]), 11))
test('tiny-sum resolves its own nested sum-core', () => assert.equal(version(), 'sum-core 0.3.1'))
`,
  'test/label.test.js': `import assert from 'node:assert/strict'
import { test } from 'node:test'
import { padStart } from '@fixture/pad'
import { label } from '../src/label.js'

test('padStart pads on the left', () => assert.equal(padStart('7', 3), '  7'))
test('padStart leaves long text alone', () => assert.equal(padStart('long', 2), 'long'))
test('label aligns a name and a total', () => assert.equal(label('ab', [4, 5]).length, 12))
`,
  'test/wasm.test.js': `import assert from 'node:assert/strict'
import { test } from 'node:test'
import { load } from '../src/wasm.js'

test('a wasm add export adds', async () => assert.equal((await load('add')).add(2, 40), 42))
test('a wasm add wraps at 32 bits', async () =>
  assert.equal((await load('add')).add(0x7fffffff, 1), -0x80000000))
test('a wasm memory with a 4 GiB maximum instantiates and grows', async () => {
  const { memory } = await load('big-memory')
  assert.equal(memory.buffer.byteLength, 65536)
  assert.equal(memory.grow(15), 1)
  assert.equal(memory.buffer.byteLength, 16 * 65536)
})
test('a WebAssembly.Memory with a large maximum can be made from JavaScript', () => {
  const memory = new WebAssembly.Memory({ initial: 1, maximum: 65536 })
  assert.equal(memory.buffer.byteLength, 65536)
})
`,
  'test/tools.test.js': `import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { build } from '../src/build.js'

const root = new URL('../', import.meta.url)

test('a .bin link runs its package', () => {
  const out = execFileSync(fileURLToPath(new URL('node_modules/.bin/tiny-sum', root)), ['2', '3', '4'])
  assert.equal(out.toString(), '9\\n')
})
test('the build writes dist/', () => {
  assert.equal(fs.readFileSync(build(root), 'utf8'), 'sum:       6\\n')
})
`,
}

/** How many `test(...)` calls SOURCES holds. */
const TESTS = Object.entries(SOURCES)
  .filter(([name]) => name.endsWith('.test.js'))
  .reduce((count, [, text]) => count + (text.match(/^test\(/gm)?.length ?? 0), 0)

/** The two packages the sources import, with the files that make them work. */
const IMPORTED: Record<string, string> = {
  'node_modules/tiny-sum/package.json': `${JSON.stringify({
    name: 'tiny-sum',
    version: '2.1.0',
    main: 'index.js',
    bin: { 'tiny-sum': 'bin/cli.js' },
    dependencies: { 'sum-core': '0.3.1' },
  })}\n`,
  'node_modules/tiny-sum/index.js': `'use strict'
const core = require('sum-core')
const { check } = require('./lib/check.js')
exports.add = (a, b) => check(a) + check(b)
exports.addAll = (values) => core.reduce(values.map(check))
exports.version = () => core.version
`,
  'node_modules/tiny-sum/lib/check.js': `'use strict'
exports.check = (value) => {
  if (typeof value !== 'number') throw new TypeError('tiny-sum adds numbers')
  return value
}
`,
  'node_modules/tiny-sum/bin/cli.js': `#!/usr/bin/env node
'use strict'
const { addAll } = require('..')
process.stdout.write(\`\${addAll(process.argv.slice(2).map(Number))}\\n\`)
`,
  'node_modules/tiny-sum/node_modules/sum-core/package.json': `${JSON.stringify({
    name: 'sum-core',
    version: '0.3.1',
    main: 'core.js',
  })}\n`,
  'node_modules/tiny-sum/node_modules/sum-core/core.js': `'use strict'
exports.reduce = (values) => values.reduce((a, b) => a + b, 0)
exports.version = 'sum-core 0.3.1'
`,
  'node_modules/@fixture/pad/package.json': `${JSON.stringify({
    name: '@fixture/pad',
    version: '1.0.4',
    type: 'module',
    exports: { '.': './src/index.js' },
  })}\n`,
  'node_modules/@fixture/pad/src/index.js': `export { padStart } from './pad-start.js'
`,
  'node_modules/@fixture/pad/src/pad-start.js': `/** Pads text on the left with spaces up to width. */
export const padStart = (text, width) => text.padStart(width, ' ')
`,
}

function write(root: string, relative: string, content: string | Uint8Array, mode?: number): void {
  const file = path.join(root, relative)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, content, mode === undefined ? {} : { mode })
}

/**
 * Filler packages: `count` packages of 4 to 16 files (package.json, README.md, index.js and
 * lib/ files requiring each other), every fifth with a nested `node_modules` package of its
 * own, every seventh scoped, every twentieth with a command linked from `.bin`.
 */
function writeFiller(root: string, count: number): { files: number; packages: number } {
  let files = 0
  let packages = 0
  const pkg = (folder: string, name: string, index: number, parts: number): void => {
    write(
      root,
      `${folder}/package.json`,
      `${JSON.stringify({ name, version: `1.${index}.0`, main: 'index.js', license: 'MIT' })}\n`,
    )
    write(root, `${folder}/README.md`, `# ${name}\n\nFiller package ${index}.\n`)
    write(
      root,
      `${folder}/index.js`,
      `'use strict'\nmodule.exports = [${Array.from({ length: parts }, (_, part) => `require('./lib/part-${part}.js')`).join(', ')}]\n`,
    )
    for (let part = 0; part < parts; part++)
      write(root, `${folder}/lib/part-${part}.js`, `'use strict'\nmodule.exports = ${part}\n`)
    files += 3 + parts
    packages += 1
  }
  for (let index = 0; index < count; index++) {
    const name = index % 7 === 6 ? `@scope-${index % 5}/filler-${index}` : `filler-${index}`
    const folder = `node_modules/${name}`
    pkg(folder, name, index, 1 + ((index * 5) % 13))
    if (index % 5 === 4)
      pkg(`${folder}/node_modules/inner-${index}`, `inner-${index}`, index, 1 + (index % 3))
    if (index % 20 === 19) {
      write(root, `${folder}/bin/run.js`, `#!/usr/bin/env node\nconsole.log(${index})\n`, 0o755)
      fs.mkdirSync(path.join(root, 'node_modules/.bin'), { recursive: true })
      fs.symlinkSync(`../${name}/bin/run.js`, path.join(root, `node_modules/.bin/filler-${index}`))
      files += 1
    }
  }
  return { files, packages }
}

/**
 * Builds the project in `root` (an empty folder) and commits it on `main`. `fillerPackages`
 * sets the size of `node_modules` (300, the default, makes about 3,300 files).
 */
export function makeProjectFixture(
  root: string,
  options: { fillerPackages?: number } = {},
): ProjectFixture {
  for (const [name, content] of Object.entries(SOURCES)) write(root, name, content)
  write(root, 'wasm/add.wasm', ADD_WASM)
  write(root, 'wasm/big-memory.wasm', BIG_MEMORY_WASM)
  for (const [name, content] of Object.entries(IMPORTED))
    write(root, name, content, name.endsWith('cli.js') ? 0o755 : undefined)
  fs.mkdirSync(path.join(root, 'node_modules/.bin'), { recursive: true })
  fs.symlinkSync('../tiny-sum/bin/cli.js', path.join(root, 'node_modules/.bin/tiny-sum'))
  const filler = writeFiller(root, options.fillerPackages ?? 300)
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: root, env: GIT_TEST_ENV, stdio: 'pipe' })
  git('init', '-q', '-b', 'main')
  git('add', '-A')
  git('commit', '-q', '-m', 'A project with dependencies')
  return {
    packageFiles: filler.files + Object.keys(IMPORTED).length,
    packages: filler.packages + 3,
    tests: TESTS,
    editable: 'src/sum.js',
  }
}
