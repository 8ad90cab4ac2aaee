/**
 * @module access/command-policy/load-bash-parser
 * Loads tree-sitter (WebAssembly, no native code) and its bash grammar. See
 * docs/decisions/0003-shell-parser.md for why this parser and what it costs.
 */
import fs from 'node:fs/promises'
import v8 from 'node:v8'
import { fileURLToPath } from 'node:url'
import { readEnvironment } from '../../config/environment.ts'
import type { Parser } from 'web-tree-sitter'

/**
 * A new bash parser. The caller owns it and frees it with `parser.delete()`.
 *
 * @throws the error of reading or compiling the grammar, or the signal's reason.
 */
export async function loadBashParser(options: { signal?: AbortSignal } = {}): Promise<Parser> {
  options.signal?.throwIfAborted()
  // Loaded with the first parser, not with eitri: a library user who never judges a command
  // never loads it.
  keepWasmOnBaseline()
  const { Language, Parser } = await import('web-tree-sitter')
  // Idempotent: web-tree-sitter keeps its one WebAssembly module for the whole process.
  await Parser.init()
  const grammarPath = fileURLToPath(import.meta.resolve('tree-sitter-bash/tree-sitter-bash.wasm'))
  const grammar = await fs.readFile(
    grammarPath,
    options.signal === undefined ? {} : { signal: options.signal },
  )
  const language = await Language.load(grammar)
  options.signal?.throwIfAborted()
  const parser = new Parser()
  parser.setLanguage(language)
  return parser
}

/**
 * Keeps this process's WebAssembly on V8's baseline compiler (Liftoff). Once the grammar has
 * parsed a few commands, V8's dynamic tiering recompiles its hot functions with the optimizing
 * compiler on a background thread: on this project's machine that took 2.5 s of a core and
 * raised a server's peak memory from about 145 MB to 645 MB, and a process ending meanwhile
 * waits for it (a server's exit after a shell command: 0.5 s became 2–5 s). Parsing on the
 * baseline costs about 0.1 ms more a command (208 against 95 µs for a 120-character one).
 * The flag is the process's (V8 has no switch per module): `EITRI_WASM_TIER_UP=1` leaves
 * V8's default for a library user whose own WebAssembly needs the optimizing compiler.
 */
function keepWasmOnBaseline(): void {
  if (readEnvironment().wasmTierUp === true) return
  // A budget no parse reaches: "bytes executed" before a function is tiered up.
  v8.setFlagsFromString('--wasm-tiering-budget=2000000000')
}
