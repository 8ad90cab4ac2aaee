/**
 * Finds the named types a package's public declarations use but no entry exports (API
 * Extractor's "forgotten export"): a user who sees `foo(): Bar` must be able to import `Bar`.
 *
 * It works on what a user gets: the declarations (.d.ts) TypeScript emits for the entries, so a
 * type TypeScript infers (an unannotated `export const`) is checked as written out. It reads
 * every declaration an entry exports, and every type reached from one that no entry exports
 * (so one run names them all), and reports each named type or value declared in the package's
 * own files that no entry exports. Types from dependencies and Node are the user's to import
 * from there.
 */
import path from 'node:path'
import ts from 'typescript'

/** A type a public declaration uses that no entry exports. */
export interface ForgottenExport {
  /** The type's name. */
  readonly name: string
  /** Where it is declared, relative to `root`. */
  readonly declaredIn: string
  /** The first public (or itself forgotten) declaration found using it. */
  readonly usedBy: string
}

export interface ApiCheck {
  /** Types used and not exported, sorted by name. */
  readonly forgotten: ForgottenExport[]
  /** Names each entry exports (relative entry path → sorted names), for a control. */
  readonly exported: Record<string, string[]>
  /** Errors of the declaration emit (a type the emit cannot name, a type error). */
  readonly diagnostics: string[]
}

/**
 * Emits declarations for `entries` (absolute paths of .ts files below `root`) in memory, with
 * the compiler options of `tsconfig` (absolute path) and `overrides`, and checks them.
 */
export function checkPublicApi(
  root: string,
  entries: string[],
  tsconfig: string,
  overrides: ts.CompilerOptions = {},
): ApiCheck {
  const config = ts.getParsedCommandLineOfConfigFile(
    tsconfig,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
      },
    },
  )
  if (!config) throw new Error(`cannot read ${tsconfig}`)
  // The emitted files live only in this map, under a folder of root (so that packages still
  // resolve from root's node_modules).
  const outDir = path.join(root, '.public-api-check')
  const options: ts.CompilerOptions = {
    ...config.options,
    ...overrides,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    declarationMap: false,
    sourceMap: false,
    rootDir: root,
    outDir,
  }
  const emitted = new Map<string, string>()
  const source = ts.createProgram({ rootNames: entries, options })
  // Declarations keep a relative import's `.ts`; `.js` makes it resolve to the emitted `.d.ts`.
  const emit = source.emit(undefined, (file, text) =>
    emitted.set(path.resolve(file), text.replace(/(['"])(\.\.?\/[^'"]*?)\.ts\1/g, '$1$2.js$1')),
  )
  // Type errors are the typecheck's; these are the declarations the emit cannot write.
  const diagnostics = emit.diagnostics.map(
    (diagnostic) =>
      `${diagnostic.file ? path.relative(root, diagnostic.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`,
  )

  const host = ts.createCompilerHost(options)
  const readFile = host.readFile.bind(host)
  const fileExists = host.fileExists.bind(host)
  const getSourceFile = host.getSourceFile.bind(host)
  host.readFile = (file) => emitted.get(path.resolve(file)) ?? readFile(file)
  host.fileExists = (file) => emitted.has(path.resolve(file)) || fileExists(file)
  // Module resolution asks whether a folder exists before it looks inside.
  const directoryExists = host.directoryExists?.bind(host)
  host.directoryExists = (folder) =>
    path.resolve(folder).startsWith(outDir) || (directoryExists?.(folder) ?? true)
  host.getSourceFile = (file, language, ...rest) => {
    const text = emitted.get(path.resolve(file))
    return text === undefined
      ? getSourceFile(file, language, ...rest)
      : ts.createSourceFile(file, text, language, true)
  }
  const declarationOf = (entry: string): string =>
    path.join(outDir, path.relative(root, entry)).replace(/\.ts$/, '.d.ts')
  const program = ts.createProgram({
    rootNames: entries.map(declarationOf),
    options: { ...options, noEmit: true },
    host,
  })
  const checker = program.getTypeChecker()
  const resolve = (symbol: ts.Symbol): ts.Symbol =>
    symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
  const ours = (symbol: ts.Symbol): ts.Declaration[] =>
    (symbol.declarations ?? []).filter((declaration) =>
      emitted.has(path.resolve(declaration.getSourceFile().fileName)),
    )

  const exportedSymbols = new Set<ts.Symbol>()
  const exported: Record<string, string[]> = {}
  const work: { symbol: ts.Symbol; label: string }[] = []
  for (const entry of entries) {
    const file = program.getSourceFile(declarationOf(entry))
    const module = file && checker.getSymbolAtLocation(file)
    if (!module) throw new Error(`no declarations emitted for ${entry}`)
    const names: string[] = []
    for (const symbol of checker.getExportsOfModule(module)) {
      names.push(symbol.name)
      const target = resolve(symbol)
      exportedSymbols.add(target)
      work.push({ symbol: target, label: `${symbol.name} (${path.relative(root, entry)})` })
    }
    exported[path.relative(root, entry)] = names.sort()
  }

  const forgotten = new Map<ts.Symbol, ForgottenExport>()
  const seen = new Set<ts.Symbol>()
  const note = (name: ts.Node | undefined, label: string): void => {
    const found = name && checker.getSymbolAtLocation(name)
    if (!found) return
    const symbol = resolve(found)
    if (symbol.flags & ts.SymbolFlags.TypeParameter || exportedSymbols.has(symbol)) return
    const declarations = ours(symbol)
    if (declarations.length === 0 || forgotten.has(symbol)) return
    // A member (`Foo.bar` in a type query) belongs to its container, which is checked.
    if (declarations.some((declaration) => !isTopLevel(declaration))) return
    const declaredIn = path.relative(
      outDir,
      (declarations[0] as ts.Declaration).getSourceFile().fileName,
    )
    forgotten.set(symbol, { name: symbol.name, declaredIn, usedBy: label })
    work.push({ symbol, label: `${symbol.name} (not exported)` })
  }
  const visit = (node: ts.Node, label: string): void => {
    if (ts.isTypeReferenceNode(node)) note(rightmost(node.typeName), label)
    else if (ts.isExpressionWithTypeArguments(node)) note(rightmost(node.expression), label)
    else if (ts.isTypeQueryNode(node)) note(rightmost(node.exprName), label)
    else if (ts.isImportTypeNode(node) && node.qualifier) note(rightmost(node.qualifier), label)
    ts.forEachChild(node, (child) => visit(child, label))
  }
  for (let item = work.pop(); item !== undefined; item = work.pop()) {
    if (seen.has(item.symbol)) continue
    seen.add(item.symbol)
    for (const declaration of ours(item.symbol)) visit(declaration, item.label)
  }

  return {
    forgotten: [...forgotten.values()].sort((a, b) => a.name.localeCompare(b.name)),
    exported,
    diagnostics,
  }
}

/** The last name of `a.b.c` (the one that names the type). */
function rightmost(name: ts.Node): ts.Node {
  if (ts.isQualifiedName(name)) return name.right
  if (ts.isPropertyAccessExpression(name)) return name.name
  return name
}

/** Whether a declaration stands at the top of its file (not a member or a local). */
function isTopLevel(declaration: ts.Declaration): boolean {
  const parent = ts.isVariableDeclaration(declaration)
    ? declaration.parent.parent.parent
    : declaration.parent
  return parent !== undefined && (ts.isSourceFile(parent) || ts.isModuleBlock(parent))
}
