/**
 * `npm run build`: emits dist/ for publishing (JavaScript, declarations, source maps). tsconfig.build.json
 * compiles src/ without its tests and test support (except what the `eitri/testing` entry
 * reaches); afterwards every file package.json's `exports` names must exist.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'

const root = new URL('..', import.meta.url)
fs.rmSync(new URL('dist', root), { recursive: true, force: true })
execFileSync(
  process.execPath,
  [new URL('node_modules/typescript/bin/tsc', root).pathname, '-p', 'tsconfig.build.json'],
  { stdio: 'inherit', cwd: root },
)

const manifest: unknown = JSON.parse(fs.readFileSync(new URL('package.json', root), 'utf8'))
const exportsField =
  typeof manifest === 'object' && manifest !== null && 'exports' in manifest
    ? manifest.exports
    : undefined
const targets = JSON.stringify(exportsField ?? {}).match(/"\.\/dist\/[^"]+"/g) ?? []
const missing = targets
  .map((target) => JSON.parse(target) as string)
  .filter((target) => !fs.existsSync(new URL(target, root)))
if (targets.length === 0 || missing.length > 0) {
  process.stderr.write(
    `build: package.json exports name files the build did not emit: ${missing.join(', ') || '(no dist/ targets found)'}. Add the entry under src/entry/ or fix exports.\n`,
  )
  process.exit(1)
}
