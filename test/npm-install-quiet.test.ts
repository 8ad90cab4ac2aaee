/**
 * Installing eitri from a clone prints no warnings: npm runs on the machine's own Node, which
 * eitri's dependencies (isolated-vm, the AI SDK) ask to be newer, while eitri runs them on the
 * Node 24 it installs. The project's `.npmrc` keeps npm to errors. Checked with `npm ci
 * --dry-run --offline` on the repository's manifest and lockfile: no download, no install.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'

const ROOT = path.resolve(import.meta.dirname, '..')

/** The environment of a person at a shell: no npm of a running script, no eitri's own Node. */
function personEnvironment(): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name)) environment[name] = value
  }
  environment.PATH = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((folder) => !folder.includes('node_modules'))
    .join(path.delimiter)
  return environment
}

/** `npm ci --dry-run` in a copy of the manifest, lockfile and `.npmrc`; its stderr. */
function dryInstall(t: TestContext, change: (folder: string) => void, flags: string[] = []) {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-npm-'))
  t.after(() => fs.rmSync(folder, { recursive: true, force: true }))
  for (const file of ['package.json', 'package-lock.json', '.npmrc']) {
    fs.copyFileSync(path.join(ROOT, file), path.join(folder, file))
  }
  change(folder)
  const run = spawnSync('npm', ['ci', '--dry-run', '--offline', '--no-audit', ...flags], {
    cwd: folder,
    env: personEnvironment(),
    encoding: 'utf8',
    timeout: 120_000,
  })
  assert.equal(run.status, 0, run.stderr)
  return run.stderr
}

describe('npm ci in a clone', () => {
  it('prints no warning (no EBADENGINE from the Node npm runs on)', (t) => {
    assert.equal(
      dryInstall(t, () => undefined),
      '',
    )
  })
  it('(the control: a warning npm would print shows with --loglevel=warn, and not without)', (t) => {
    // The root asks for a Node no machine has: npm warns whatever Node it runs on.
    const impossible = (folder: string) => {
      const file = path.join(folder, 'package.json')
      const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>
      fs.writeFileSync(file, JSON.stringify({ ...manifest, engines: { node: '>=999' } }))
    }
    assert.match(dryInstall(t, impossible, ['--loglevel=warn']), /EBADENGINE/)
    assert.equal(dryInstall(t, impossible), '')
  })
})
