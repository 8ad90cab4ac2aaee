/**
 * What watching main costs a server at 10,000 and 50,000 files of a realistic project (most of
 * them in an ignored `node_modules`): eitri's watcher (one watch per folder git looks into)
 * against Node's recursive `fs.watch` (which walks and watches every folder), in the same run.
 * For each: the time from starting the watcher until it reports a change in `src/` (it is
 * working), and how many folders it watches.
 *
 * `EITRI_BENCH_SIZES=2000 npm run bench -- main-watcher` for a quick run.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { DirectoryTree } from '../src/workspace/directory-tree.ts'
import { IgnoredPaths } from '../src/workspace/ignored-paths.ts'
import { MainWatcher } from '../src/workspace/main-watcher.ts'
import { report } from './measure.ts'
import { makeProject } from './project-fixture.ts'

const SIZES = (process.env['EITRI_BENCH_SIZES'] ?? '10000,50000')
  .split(',')
  .map((size) => Number(size.trim()))
  .filter((size) => Number.isInteger(size) && size >= 10)
const PROBE = 'src/module-0/file-0.ts'

/** Writes the probe file until `seen` says a change arrived; answers microseconds since `start`. */
async function untilSeen(root: string, start: number, seen: () => Promise<boolean>) {
  for (let round = 0; ; round++) {
    fs.writeFileSync(path.join(root, PROBE), `export const round = ${round}\n`)
    await new Promise((resolve) => setTimeout(resolve, 2))
    if (await seen()) return (performance.now() - start) * 1000
    if (round > 60_000) throw new Error('the watcher never reported the change')
  }
}

async function ours(root: string): Promise<{ micros: number; folders: number }> {
  const start = performance.now()
  const watcher = new MainWatcher({
    root,
    excluded: () => false,
    ignored: new IgnoredPaths(new DirectoryTree(root)),
    trackedFolders: async () => new Set(),
  })
  try {
    const micros = await untilSeen(root, start, async () =>
      ((await watcher.take()) ?? []).includes(PROBE),
    )
    return { micros, folders: watcher.watchedFolders }
  } finally {
    watcher.close()
  }
}

async function nodeRecursive(root: string): Promise<{ micros: number; folders: number }> {
  const start = performance.now()
  let saw = false
  const watcher = fs.watch(root, { recursive: true }, (_event, name) => {
    if (name === PROBE) saw = true
  })
  try {
    const micros = await untilSeen(root, start, async () => saw)
    let folders = 0
    for (const entry of fs.readdirSync(root, { withFileTypes: true, recursive: true }))
      if (entry.isDirectory()) folders += 1
    return { micros, folders: folders + 1 }
  } finally {
    watcher.close()
  }
}

for (const size of SIZES) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-bench-watch-'))
  try {
    makeProject(root, size)
    // Each twice, in turn; the second of each is reported (the first warms the page cache).
    await ours(root)
    await nodeRecursive(root)
    const eitri = await ours(root)
    const node = await nodeRecursive(root)
    report(
      `${size} files: watching main, until a change is seen`,
      eitri.micros,
      node.micros,
      "Node's recursive fs.watch",
    )
    process.stdout.write(
      `  folders watched: eitri ${eitri.folders}, Node's recursive watch ${node.folders}\n`,
    )
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}
