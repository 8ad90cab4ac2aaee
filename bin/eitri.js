#!/usr/bin/env node
// The `eitri` command. From a clone, Node runs the TypeScript sources directly; from the
// published package, the built JavaScript in dist/.
import { existsSync } from 'node:fs'

const major = Number(process.versions.node.split('.')[0])
if (major < 24) {
  process.stderr.write(
    `eitri needs Node.js 24 or later (this is ${process.version}). From a clone, run it through npm (npx eitri ...), which uses the Node 24 that npm install fetched.\n`,
  )
  process.exit(1)
}
const sources = new URL('../src/cli/eitri-main.ts', import.meta.url)
await import(
  existsSync(sources) ? sources.href : new URL('../dist/cli/eitri-main.js', import.meta.url).href
)
