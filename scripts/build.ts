/**
 * `npm run build`: emits dist/ for publishing (JavaScript, declarations, source maps).
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'

fs.rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true })
execFileSync(
  process.execPath,
  [
    new URL('../node_modules/typescript/bin/tsc', import.meta.url).pathname,
    '-p',
    'tsconfig.build.json',
  ],
  {
    stdio: 'inherit',
    cwd: new URL('..', import.meta.url),
  },
)
