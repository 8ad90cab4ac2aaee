/**
 * The layer rule of ARCHITECTURE.md, enforced: a lower layer never imports a higher one, and no
 * module imports itself through a cycle.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'

const SRC = fileURLToPath(new URL('../src/', import.meta.url))

/** Rank of each top-level folder of src/: an import must go to the same folder or a lower rank. */
const LAYER_RANK: Record<string, number> = {
  errors: 0,
  util: 0,
  ports: 1,
  tool: 2,
  config: 3,
  workspace: 3,
  store: 3,
  access: 4,
  bubblewrap: 4,
  jail: 5,
  confine: 5,
  eval: 5,
  tools: 6,
  provider: 6,
  agent: 7,
  workshop: 8,
  mcp: 9,
  // program-bench environments: they open workshops, and the CLI runs them.
  bench: 9,
  cli: 10,
  ui: 10,
  // The package's entries (eitri/mcp, …): they may import anything, and nothing imports them.
  entry: 11,
}

function sourceFiles(folder: string): string[] {
  return fs
    .readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter(
      (entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'),
    )
    .map((entry) => path.join(entry.parentPath, entry.name))
}

function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8')
  const found: string[] = []
  for (const match of text.matchAll(
    /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"](\.[^'"]+)['"]/g,
  )) {
    found.push(path.resolve(path.dirname(file), match[1] as string))
  }
  for (const match of text.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
    found.push(path.resolve(path.dirname(file), match[1] as string))
  }
  return found
}

function layerOf(file: string): string {
  const relative = path.relative(SRC, file)
  return relative.includes(path.sep) ? (relative.split(path.sep)[0] as string) : '(root)'
}

const files = sourceFiles(SRC)

describe('layers', () => {
  it('every folder of src/ has a rank', () => {
    const unranked = [...new Set(files.map(layerOf))].filter(
      (layer) => layer !== '(root)' && !(layer in LAYER_RANK),
    )
    assert.deepEqual(unranked, [], 'add new folders to LAYER_RANK and to ARCHITECTURE.md')
  })

  it('no module imports a higher layer', () => {
    const violations: string[] = []
    for (const file of files) {
      const from = layerOf(file)
      // Test support beside the code (test-*.ts) may build whole workshops; it ships nowhere.
      if (from === '(root)' || path.basename(file).startsWith('test-')) continue
      for (const target of importsOf(file)) {
        const to = layerOf(target)
        if (to === '(root)' || to === from) continue
        if (
          (LAYER_RANK[to] ?? Infinity) > (LAYER_RANK[from] ?? -1) ||
          LAYER_RANK[to] === LAYER_RANK[from]
        ) {
          violations.push(`${path.relative(SRC, file)} → ${path.relative(SRC, target)}`)
        }
      }
    }
    assert.deepEqual(violations, [])
  })

  it('no import cycles', () => {
    const graph = new Map(
      files.map((file) => [file, importsOf(file).filter((target) => files.includes(target))]),
    )
    const state = new Map<string, 'visiting' | 'done'>()
    const cycles: string[] = []
    const visit = (file: string, trail: string[]): void => {
      if (state.get(file) === 'done') return
      if (state.get(file) === 'visiting') {
        cycles.push(
          [...trail.slice(trail.indexOf(file)), file]
            .map((entry) => path.relative(SRC, entry))
            .join(' → '),
        )
        return
      }
      state.set(file, 'visiting')
      for (const next of graph.get(file) ?? []) visit(next, [...trail, file])
      state.set(file, 'done')
    }
    for (const file of files) visit(file, [])
    assert.deepEqual(cycles, [])
  })

  it('the checker sees imports (a check that finds nothing proves nothing)', () => {
    const cli = files.find((file) => file.endsWith(path.join('cli', 'main.ts')))
    assert.ok(cli)
    assert.ok(importsOf(cli).some((target) => layerOf(target) === 'cli'))
    assert.ok(
      files.some((file) => importsOf(file).some((target) => layerOf(target) !== layerOf(file))),
    )
  })
})
