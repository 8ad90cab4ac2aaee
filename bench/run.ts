/**
 * `npm run bench`: runs every bench/*.bench.ts in turn, or only those whose names contain an
 * argument (`npm run bench -- jail`).
 */
import fs from 'node:fs'
import os from 'node:os'

const filters = process.argv.slice(2)
const folder = new URL('./', import.meta.url)
const benches = fs
  .readdirSync(folder)
  .filter((name) => name.endsWith('.bench.ts'))
  .filter((name) => filters.length === 0 || filters.some((filter) => name.includes(filter)))
  .sort()

process.stdout.write(
  `eitri benches on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, ${new Date().toISOString()}\n`,
)
for (const name of benches) {
  process.stdout.write(`\n## ${name.replace('.bench.ts', '')}\n`)
  await import(new URL(name, folder).href)
}
