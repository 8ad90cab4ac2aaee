/**
 * The project the size benches build: a realistic layout (sources committed, a `node_modules`
 * of nested packages ignored) of an exact number of files.
 */
import fs from 'node:fs'
import path from 'node:path'

function write(root: string, relative: string, content: string): void {
  const file = path.join(root, relative)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, content)
}

/**
 * A project of exactly `files` files outside `.git`: package.json, README.md and .gitignore;
 * src/ (a twentieth of the files, 20 to a folder), committed; and a node_modules (ignored, as
 * in real projects) of packages of 4 to 26 small files, every fourth with a nested
 * node_modules of its own, every tenth scoped. `.git` is packed, so it adds a few dozen files.
 */
export function makeProject(root: string, files: number): number {
  write(root, 'package.json', '{ "name": "fixture", "version": "1.0.0", "type": "module" }\n')
  write(root, 'README.md', '# fixture\n\nA project for the jail-size bench.\n')
  write(root, '.gitignore', 'node_modules/\n')
  let left = files - 3
  const sources = Math.min(left, Math.max(5, Math.round(files / 20)))
  for (let index = 0; index < sources; index++)
    write(
      root,
      `src/module-${Math.floor(index / 20)}/file-${index}.ts`,
      `export const value${index} = ${index}\n`,
    )
  left -= sources
  let pkg = 0
  while (left > 0) {
    const name = pkg % 10 === 9 ? `@scope-${pkg % 7}/package-${pkg}` : `package-${pkg}`
    const folder = `node_modules/${name}`
    const own = [
      'package.json',
      'README.md',
      'index.js',
      ...Array.from({ length: 1 + ((pkg * 7) % 23) }, (_, index) => `lib/part-${index}.js`),
    ]
    const nested =
      pkg % 4 === 3
        ? ['package.json', 'index.js', 'lib/a.js', 'lib/b.js', 'lib/c.js'].map(
            (file) => `node_modules/dep-of-${pkg}/${file}`,
          )
        : []
    for (const file of [...own, ...nested]) {
      if (left === 0) break
      write(
        root,
        `${folder}/${file}`,
        file.endsWith('package.json')
          ? `{ "name": "${name}", "version": "1.${pkg}.0", "main": "index.js" }\n`
          : `'use strict'\nmodule.exports = function part${pkg}() { return ${JSON.stringify(file)} }\n`,
      )
      left -= 1
    }
    pkg += 1
  }
  return 3 + sources
}
