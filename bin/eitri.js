#!/usr/bin/env node
// The `eitri` command. From a clone, Node runs the TypeScript sources directly; from the
// published package, the built JavaScript in dist/.
//
// Started by an older Node (the machine's own, through `npm link` or a global install), it
// runs itself again with the Node 24 that `npm install` put in eitri's own node_modules, so
// the command works from any folder. This file stays plain JavaScript any Node can parse.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import module from 'node:module'
import { fileURLToPath } from 'node:url'

const major = Number(process.versions.node.split('.')[0])
if (major < 24) await relaunch()
else {
  // Nothing eitri starts should mistake itself for a relaunch.
  delete process.env.EITRI_RELAUNCHED
  enableCompileCache()
  const sources = new URL('../src/cli/eitri-main.ts', import.meta.url)
  await import(
    existsSync(sources) ? sources.href : new URL('../dist/cli/eitri-main.js', import.meta.url).href
  )
}

/**
 * Keeps the compiled code of eitri's modules (from a clone, with the TypeScript already
 * stripped) between runs: about half of a short command's start otherwise. The cache lies in
 * eitri's own node_modules, beside the code it stands for, so whoever can change it could
 * change that code already; in the shared temporary folder, Node's default, any local account
 * could plant code in it. Without eitri's node_modules (or where it is not writable) there is
 * no cache, and `NODE_DISABLE_COMPILE_CACHE=1` turns it off. Only this process uses it: it sets
 * nothing a child inherits.
 */
function enableCompileCache() {
  const modules = new URL('../node_modules/', import.meta.url)
  if (typeof module.enableCompileCache !== 'function' || !existsSync(modules)) return
  module.enableCompileCache(fileURLToPath(new URL('.cache/eitri-compile-cache', modules)))
}

/** Runs this file under the pinned Node 24, passing arguments, streams, signals and status. */
async function relaunch() {
  const pinned = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url))
  // The guard stops a loop should the pinned Node itself be older than it claims.
  if (!existsSync(pinned) || process.env.EITRI_RELAUNCHED === process.version) {
    process.stderr.write(
      `eitri needs Node.js 24 or later (this is ${process.version}). Run \`npm install\` in eitri's folder: it fetches the Node 24 eitri runs on (into node_modules), and this command then uses it.\n`,
    )
    process.exit(1)
  }
  const child = spawn(
    pinned,
    [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { stdio: 'inherit', env: { ...process.env, EITRI_RELAUNCHED: process.version } },
  )
  // A signal sent to this process is meant for eitri. Ctrl-C at a terminal reaches both
  // processes; eitri counts two interrupts that close together as one.
  const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2']
  const forward = (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
  }
  for (const signal of forwarded) process.on(signal, forward)
  const [code, signal] = await new Promise((resolve) => {
    child.once('error', (error) => {
      process.stderr.write(`eitri: cannot start ${pinned}: ${error.message}\n`)
      resolve([1, null])
    })
    child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal]))
  })
  for (const name of forwarded) process.off(name, forward)
  if (signal !== null) {
    // Die of the same signal, so whoever started eitri sees what happened to it.
    process.kill(process.pid, signal)
    setTimeout(() => process.exit(128), 1000).unref()
    return
  }
  process.exit(code ?? 1)
}
