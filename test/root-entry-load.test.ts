/**
 * The entries load without the heavy optional parts: PostgreSQL's client, the isolate engine (a
 * native addon) and the shell parser (WebAssembly) load when first used, so a library user who
 * only defines tools pays for none of them, an MCP server that keeps its store in SQLite never
 * loads `pg`, and so on for each subpath. The AI SDK (and the price table) load at the first
 * llm Run: opening a workshop, or any command that runs no model, loads neither.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { ENTRIES } from './helpers/entry-exports.ts'

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

const HEAVY = /\/node_modules\/(pg|isolated-vm|web-tree-sitter|ai|@ai-sdk\/[^/]+|tokenlens)\//

/** For each entry, a module the hook must see it load (the control: the hook works). */
const LOADS: Record<string, RegExp> = {
  eitri: /\/node_modules\/zod\//,
  'eitri/mcp': /\/node_modules\/@modelcontextprotocol\/sdk\//,
  'eitri/store': /\/src\/store\/open-store\.ts$/,
  'eitri/eval': /\/src\/eval\/host\/isolate-engine\.ts$/,
  'eitri/jail': /\/src\/jail\/jail\.ts$/,
  'eitri/confine': /\/src\/confine\/confine\.ts$/,
  'eitri/testing': /\/src\/store\/store-contract\.ts$/,
}

describe('entries load no PostgreSQL client, isolate engine or shell parser', () => {
  for (const [entry, file] of Object.entries(ENTRIES)) {
    it(entry, () => {
      const resolved = resolvedBy(fileURLToPath(new URL(`../${file}`, import.meta.url)))
      const control = LOADS[entry]
      assert.ok(control, `${entry} has a control in LOADS`)
      assert.ok(
        resolved.some((url) => control.test(url)),
        'the hook saw the entry load',
      )
      assert.deepEqual(
        resolved.filter((url) => HEAVY.test(url)),
        [],
      )
    })
  }
  it('the workshop and the CLI (its exec command included) load no AI SDK', () => {
    for (const file of [
      'src/workshop/workshop.ts',
      'src/cli/main.ts',
      'src/cli/commands/exec-command.ts',
      'src/cli/commands/run-command.ts',
      'src/cli/commands/serve-command.ts',
    ]) {
      const resolved = resolvedBy(fileURLToPath(new URL(`../${file}`, import.meta.url)))
      assert.ok(resolved.some((url) => url.endsWith(file)))
      assert.deepEqual(
        resolved.filter((url) => HEAVY.test(url)),
        [],
        file,
      )
    }
  })
  it('the workshop and `eitri exec` load the code sandbox and the agent runtime only when used', () => {
    // The code sandbox's host (the engine, the capabilities, the HTTP client under them) and
    // the Runs' machinery load at the first eval and the first hire.
    const LATER = /\/src\/(eval\/(host|capabilities)\/|agent\/(agent-runtime|run-execution)\.ts$)/
    for (const file of ['src/workshop/workshop.ts', 'src/cli/commands/exec-command.ts']) {
      const resolved = resolvedBy(fileURLToPath(new URL(`../${file}`, import.meta.url)))
      assert.ok(resolved.some((url) => url.endsWith(file)))
      assert.deepEqual(
        resolved.filter((url) => LATER.test(url)),
        [],
        file,
      )
    }
    // The control: what loads them does.
    for (const file of ['src/workshop/eval-sandbox.ts', 'src/agent/agent-runtime.ts']) {
      const resolved = resolvedBy(fileURLToPath(new URL(`../${file}`, import.meta.url)))
      assert.ok(
        resolved.some((url) => LATER.test(url)),
        file,
      )
    }
  })
  it('the check sees the AI SDK load when a model is resolved', () => {
    const resolved = resolvedBy(
      fileURLToPath(new URL('../src/provider/create-model-catalog.ts', import.meta.url)),
    )
    assert.ok(resolved.some((url) => /\/node_modules\/@ai-sdk\/openai\//.test(url)))
    assert.ok(resolved.some((url) => HEAVY.test(url)))
  })
  it('the check sees a heavy module when one loads (PostgreSQL client)', () => {
    assert.ok(resolvedBy(fileURLToPath(import.meta.resolve('pg'))).some((url) => HEAVY.test(url)))
  })
})
