/**
 * @module access/command-policy/load-bash-parser
 * Loads tree-sitter (WebAssembly, no native code) and its bash grammar. See
 * docs/decisions/0003-shell-parser.md for why this parser and what it costs.
 */
import fs from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
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
