/**
 * @module workshop/workshop
 * A workshop binds the pieces for one workspace: the configuration, the confined view of the
 * folder, the jail, and the toolset. The library, the CLI and the MCP server all start from one;
 * each connection or caller works in a session of its own (its background jobs are its own).
 */
import { MAIN_LINE } from '../ports/line-control.ts'
import fs from 'node:fs'
import path from 'node:path'
import type { ApprovalRecorder } from '../access/approval-log.ts'
import type { ApprovalPolicy, Approver } from '../access/approval.ts'
import { modeCatalog } from '../access/modes.ts'
import { rulesFromConfig } from '../access/permission-rules.ts'
import { RepositoryPrograms } from '../access/git-metadata/repository-programs.ts'
import { homeProtectedPaths } from '../access/protected-paths.ts'
import { createWorkspaceView } from '../access/confined-workspace.ts'
import { loadConfig, type EitriConfig } from '../config/config-file.ts'
import { readEnvironment, type EitriEnvironment } from '../config/environment.ts'
import { privatePathsInside, realPrivatePaths } from '../config/private-paths.ts'
import { workspaceStateDir } from '../config/state-dir.ts'
import { EitriError } from '../errors/eitri-error.ts'
import { openStore } from '../store/open-store.ts'
import type { Store } from '../store/store.ts'
import { DEFAULT_STORE_FILE, parseStoreUrl } from '../store/store-url.ts'
import { Jail } from '../jail/jail.ts'
import { builtInTools } from '../tools/built-in-tools.ts'
import type { Tool } from '../tool/define-tool.ts'
import type { AccessLevel } from '../ports/access-context.ts'
import type { ToolContext } from '../tool/tool-context.ts'
import { ToolRegistry } from '../tool/tool-registry.ts'
import type { ToolResult } from '../tool/tool-result.ts'
import { Toolset } from '../tool/toolset.ts'
import type { WorkspaceView } from '../ports/workspace-view.ts'
import { DirectoryTree } from '../workspace/directory-tree.ts'
import { BlobDrive } from '../workspace/blob-drive.ts'
import { WorkspaceLines } from '../workspace/workspace-lines.ts'
import { mainWriteGuard } from './main-write-guard.ts'
import { materializedDrive } from './materialized-drive.ts'
import { sweepAbandonedFolders } from '../jail/temporary-folders.ts'
import {
  FORK_KEEP_FOLDER,
  forkLayerInUse,
  removeUnclaimedForkKeep,
  sweepForkKeeps,
} from '../jail/overlay/fork-keep.ts'
import { describeForkGitCommits, forkBranchCommits } from './fork-git-commits.ts'
import { forkKeep, forkWantsLayer, LineSurfaces } from './line-surfaces.ts'
import { createSession, type SessionOptions, type WorkshopSession } from './workshop-session.ts'
import type { EvaluationOptions } from './eval-sandbox.ts'
import { lazyEvalSandbox } from './lazy-eval-sandbox.ts'
import { lazyCommandJudge } from './command-judge.ts'
import { storeApprovalRecorder } from './store-approval-recorder.ts'
import { configuredRoster } from './configured-roster.ts'
import { RunLeases } from '../agent/run-lease.ts'
import { DETERMINISTIC_PROGRAMS } from '../agent/deterministic-programs.ts'
import type { ProgramFactory } from '../agent/program.ts'
import { llmProgramFactory } from '../agent/llm/llm-program.ts'
import { lazyModelCatalog } from '../provider/lazy-model-catalog.ts'

/** How to open a workshop. Every field has a default. */
export interface WorkshopOptions {
  /** The workspace folder. @default the current directory */
  readonly workspace?: string
  /** eitri's state folder. @default `$EITRI_STATE_DIR`, else the XDG state home */
  readonly stateDir?: string
  /** The configuration file. @default `$EITRI_CONFIG`, else the XDG config home */
  readonly configPath?: string
  /** Names of the tools to offer. @default every built-in tool and every extra tool */
  readonly tools?: readonly string[]
  /** Your own tools, registered beside the built-in ones. */
  readonly extraTools?: readonly Tool[]
  /** The environment to take defaults from. @default the process's */
  readonly environment?: EitriEnvironment
  /** The bubblewrap program. @default 'bwrap' */
  readonly bwrap?: string
  /** The code sandbox of js_eval: limits, engine, test-only options. */
  readonly evaluation?: EvaluationOptions
  /** The access setting of new sessions. @default the configuration's, else 'workspace-write' */
  readonly access?: AccessLevel
  /** The starting mode of new sessions. @default 'default' */
  readonly mode?: string
  /** When to ask a person. @default the configuration's, else 'on-request' */
  readonly approval?: ApprovalPolicy
  /** Who decides what policy leaves to a person. @default nobody: such actions are refused */
  readonly approver?: Approver
  /**
   * The store: a URL (`sqlite:PATH`, `postgres://…`), or an open Store the caller keeps and
   * closes. @default `$EITRI_STORE`, else `store.sqlite` in the workspace's state folder
   */
  readonly store?: string | Store
  /** Start every session on a fresh fork of main (`eitri serve --isolate`). @default false */
  readonly isolate?: boolean
  /** Watch main for changes, so forks cost what changed (a long-running server). @default false */
  readonly watch?: boolean
  /**
   * More program kinds hired agents may run, beside `echo` and `scripted` (a kind named here
   * replaces the built-in one). Each Run's program calls its tools through the contract.
   * Internal until the agent layer's program interface is public (tests and benches use it).
   * @internal
   */
  readonly programs?: Readonly<Record<string, ProgramFactory>>
}

export type { SessionOptions, WorkshopSession }

/** The real path of `hostPath` when it exists, else itself. */
function realPathOrSelf(hostPath: string | undefined): string | undefined {
  if (hostPath === undefined) return undefined
  try {
    return fs.realpathSync(hostPath)
  } catch {
    return hostPath
  }
}

/** One workspace, its configuration and its tools. */
export interface Workshop extends AsyncDisposable {
  readonly toolset: Toolset
  /** The workspace behind the path policy only (before any session's access). */
  readonly workspace: WorkspaceView
  readonly jail: Jail
  readonly config: EitriConfig
  /** eitri's state folder for this workspace, outside the workspace. */
  readonly stateDir: string
  readonly configPath: string
  /** Opens a session: one per MCP connection. */
  readonly openSession: (options?: SessionOptions) => Promise<WorkshopSession>
  /**
   * Starts loading the command policy's bash parser in the background, which a session's first
   * shell command would otherwise wait for (with a session's jail, `ProgramSession.availability`,
   * that is what such a command waits for), and the walk for nested repositories that a first
   * write's git rule waits for. `eitri serve` calls both once a client has listed the tools. A
   * failure is reported by the first command or write, as without it.
   */
  readonly prepareCommands: () => void
  /**
   * The lines of work: main and its forks, with their history. For eitri's own commands and
   * server; a library user reaches lines through a session's `lines`.
   * @internal
   */
  readonly lines: WorkspaceLines
  /** The jail of a line (main's, or a fork's whose mirror holds the fork's files). */
  readonly jailOf: (line: string) => Promise<Jail>
  /** Where approval decisions are recorded (in the store). */
  readonly approvals: ApprovalRecorder
  /** Durable state: tasks, knowledge, runs, approvals. */
  readonly store: Store
  /** A context for one call of the workshop's own default session. */
  readonly context: (options?: { signal?: AbortSignal }) => ToolContext
  /**
   * Runs one tool call through the whole contract, in the default session.
   *
   * @example
   * const result = await workshop.call('read_file', { path: 'README.md' })
   */
  call(name: string, input: unknown, options?: { signal?: AbortSignal }): Promise<ToolResult>
  /** Ends every session's jobs and removes the jail's temporary folders. */
  close(): Promise<void>
}

/**
 * Opens a workshop on a folder.
 *
 * @throws EitriError `not_found` when the folder does not exist, `config_invalid` when the
 *   configuration is wrong, `unknown_tool` when `tools` names an unknown tool,
 *   `store_unavailable` when the store cannot be opened.
 * @example
 * await using workshop = await openWorkshop({ workspace: '.' })
 * console.log((await workshop.call('glob', { pattern: '**\/*.md' })).content)
 */
export async function openWorkshop(options: WorkshopOptions = {}): Promise<Workshop> {
  // What an eitri killed outright left in the temporary folder goes now (in the background).
  sweepAbandonedFolders()
  const environment = options.environment ?? readEnvironment()
  const tree = new DirectoryTree(options.workspace ?? process.cwd())
  const configPath = path.resolve(options.configPath ?? environment.configPath)
  // Absolute from here on: git runs in other folders, and a relative path would move with it.
  const stateRoot = path.resolve(options.stateDir ?? environment.stateDir)
  const storeUrl = (named: string | undefined): string =>
    named ??
    environment.store ??
    `sqlite:${path.join(workspaceStateDir(stateRoot, tree.root), DEFAULT_STORE_FILE)}`
  // Made now so that its real path is known: a link created later cannot move it.
  fs.mkdirSync(stateRoot, { recursive: true, mode: 0o700 })
  // State or configuration inside the workspace stays usable by eitri but hidden from tools.
  // Real paths, resolved once: a link in either path (a HOME behind a link) changes nothing.
  const hidden = privatePathsInside(
    tree.root,
    realPrivatePaths([
      stateRoot,
      configPath,
      ...(typeof options.store === 'object' ? [] : storeFiles(storeUrl(options.store))),
    ]),
  )
  if (hidden.includes('')) {
    throw new EitriError(
      'config_invalid',
      `eitri's state folder (${stateRoot}) cannot be the workspace itself or a folder around it: set EITRI_STATE_DIR or --state-dir to a folder outside it.`,
    )
  }
  const config = await loadConfig(configPath)
  const roster = configuredRoster(config, configPath)
  const registry = new ToolRegistry([...builtInTools(), ...(options.extraTools ?? [])])
  const toolset = new Toolset(registry, options.tools ?? registry.names())
  const evaluation = lazyEvalSandbox(async () =>
    (await import('./eval-sandbox.ts')).createEvalSandbox(
      config,
      toolset,
      options.evaluation,
      options.bwrap,
    ),
  )
  const ownsStore = typeof options.store !== 'object'
  const store =
    typeof options.store === 'object' ? options.store : await openStore(storeUrl(options.store))
  const home = realPathOrSelf(environment.home)
  // The configuration's patterns, and the shell and git files of a home folder inside it.
  const protectedPaths = [...config.protectedPaths, ...homeProtectedPaths(tree.root, home)]
  const repositories = new RepositoryPrograms({
    root: tree.root,
    home,
    globalConfigs: environment.gitConfigs ?? [],
  })
  const programs = (workTrees: readonly string[]) => repositories.programPaths(workTrees)
  const workspace = createWorkspaceView({
    tree,
    aliases: [path.resolve(options.workspace ?? process.cwd())],
    protectedPaths,
    hiddenPaths: hidden,
    programs,
  })
  const commands = lazyCommandJudge()
  const stateDir = workspaceStateDir(stateRoot, tree.root)
  const recorder = storeApprovalRecorder(store)
  const lines = await WorkspaceLines.open({
    main: tree,
    stateDir,
    excluded: hidden,
    watch: options.watch === true,
    guardMain: mainWriteGuard(async (line) =>
      line === MAIN_LINE
        ? { view: workspace, tree }
        : { view: (await surfaces.surface(line)).view, tree: await lines.tree(line) },
    ),
    maxFileBytes: config.snapshots.maxFileBytes,
    // A fork whose jail's kept layer a live process holds is in use, whatever its records say.
    forkHeld: (id) => forkLayerInUse(path.join(stateDir, 'forks', id, FORK_KEEP_FOLDER)),
    hooks: {
      forked: async (parent, child) => void (await store.forkLine(parent, child)),
      merged: async (child, parent) => {
        await store.mergeLine(child)
        const folder = forkKeep(stateDir, child).folder
        // Read before the layer goes: git commits made in the fork are not merged, only files.
        // (`kept` is the layer inside the fork's folder: ForkKeepFolder.kept.)
        const note = describeForkGitCommits(
          forkBranchCommits(path.join(folder, 'kept'), tree.root),
          parent,
        )
        await removeUnclaimedForkKeep(folder)
        return note === undefined ? [] : [note]
      },
      // A merged fork's rows already belong to its parent: nothing of it is left to discard.
      discarded: async (child) => {
        if ((await store.getLine(child))?.state === 'open') await store.discardLine(child)
        // Its jail closes, whoever discarded it (a session, a Run's settlement, a prune), and
        // its layer goes with it. Not awaited: a prune discards inside the lines' queue, which
        // a command the closing jail ends may be waiting for.
        void surfaces.drop(child)
        // Its jail's layer goes now, or when the jail that has it open closes.
        await removeUnclaimedForkKeep(forkKeep(stateDir, child).folder)
      },
    },
  })
  // Layers of forks done with that a process ended before removing go now (in the background).
  void sweepForkKeeps(path.join(stateDir, 'forks'), (id) => forkWantsLayer(stateDir, id))
  // A server watches main, so its first snapshot, taken now in the background, lets every
  // later one cost what changed. Without a watcher each snapshot looks at everything anyway,
  // and the first call's own snapshot is the first one.
  if (options.watch === true) lines.snapshots.start(config.snapshots)
  const drive = new BlobDrive(lines.history, stateDir)
  const driveCopy = await materializedDrive(drive)
  const driveMount = { source: driveCopy.folder, target: '/drive', writable: false }
  const writeBack = {
    maxFileBytes: config.jail.maxFileBytes,
    maxTotalBytes: config.jail.maxCommandBytes,
    maxKeptBytes: config.jail.maxKeptBytes,
  }
  const limits = { memoryBytes: config.jail.memoryBytes }
  const jail = new Jail({
    tree,
    view: workspace,
    writeBack,
    limits,
    protectedPaths,
    hiddenPaths: hidden,
    ...(options.bwrap === undefined ? {} : { bwrap: options.bwrap }),
    mounts: [driveMount],
  })
  const main = { line: MAIN_LINE, view: workspace, jail }
  const surfaces = new LineSurfaces({
    lines,
    main,
    jail: {
      protectedPaths,
      writeBack,
      limits,
      mounts: [driveMount],
      ...(options.bwrap === undefined ? {} : { bwrap: options.bwrap }),
    },
    protectedPaths,
    programs,
    hiddenPaths: hidden,
    stateDir,
  })
  const sessions = new Set<WorkshopSession>()
  let closed = false
  // One keeper for every session's Runs, started by the first hire: a workshop that hires
  // nothing polls nothing.
  let leases: Promise<RunLeases> | undefined
  const startLeases = (): Promise<RunLeases> => {
    leases ??= RunLeases.start(store, {
      ttlMs: config.runs.leaseTtlMs,
      heartbeatMs: config.runs.heartbeatMs,
      sweepMs: config.runs.sweepMs,
    })
    // A keeper that could not start is tried again at the next hire.
    leases.catch(() => (leases = undefined))
    return leases
  }
  const parts = {
    lines,
    surfaces,
    main,
    store,
    drive,
    evaluation,
    judge: commands.judge,
    rules: rulesFromConfig(config.rules),
    modes: modeCatalog(config.modes),
    recorder,
    config,
    mainRoot: tree.root,
    toolset,
    roster,
    programs: {
      ...DETERMINISTIC_PROGRAMS,
      // Checked at hire from the configuration alone; the AI SDK loads at the first llm Run.
      llm: llmProgramFactory({
        catalog: lazyModelCatalog({
          providers: config.providers,
          prices: config.prices,
          contextWindows: config.contextWindows,
        }),
        store,
      }),
      ...options.programs,
    },
    leases: startLeases,
    defaults: {
      ...(options.access === undefined ? {} : { access: options.access }),
      ...(options.mode === undefined ? {} : { mode: options.mode }),
      ...(options.approval === undefined ? {} : { approval: options.approval }),
      ...(options.approver === undefined ? {} : { approver: options.approver }),
      ...(options.isolate === undefined ? {} : { isolate: options.isolate }),
    },
  }
  const openSession = async (sessionOptions: SessionOptions = {}): Promise<WorkshopSession> => {
    if (closed) throw new EitriError('not_available', 'This workshop is closed; open a new one.')
    const session = await createSession(parts, sessionOptions, (ended) => sessions.delete(ended))
    sessions.add(session)
    return session
  }
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    await Promise.all([...sessions].map((session) => session.close()))
    await (await leases?.catch(() => undefined))?.close()
    await evaluation.close()
    await surfaces.close()
    await jail.close()
    await lines.close()
    driveCopy.close()
    await commands.close()
    if (ownsStore) await store.close()
  }
  let defaultSession: WorkshopSession
  try {
    defaultSession = await openSession()
  } catch (error) {
    // A workshop that cannot open its first session starts nothing half-open.
    await close()
    throw error
  }
  return {
    toolset,
    workspace,
    jail,
    config,
    stateDir,
    approvals: recorder,
    store,
    configPath,
    openSession,
    prepareCommands: () => {
      if (closed) return
      commands.prepare()
      // The walk for nested repositories, which every write's git rule needs: tens of
      // thousands of entries with a node_modules, read while the client's model thinks.
      void repositories.prepare()
    },
    lines,
    jailOf: async (line) => {
      const found = lines.find(line)
      return (await surfaces.surface(found === MAIN_LINE ? MAIN_LINE : found.id)).jail
    },
    context: defaultSession.context,
    async call(name, input, callOptions = {}) {
      if (closed) throw new EitriError('not_available', 'This workshop is closed; open a new one.')
      return toolset.run({ name, input }, defaultSession.context(callOptions))
    },
    close,
    [Symbol.asyncDispose]: close,
  }
}

/** The files of a SQLite store (with its journals), to hide should they lie in the workspace. */
function storeFiles(url: string): string[] {
  if (!url.startsWith('sqlite:')) return []
  const location = parseStoreUrl(url)
  if (location.backend !== 'sqlite' || location.file === ':memory:') return []
  return ['', '-wal', '-shm', '-journal'].map((suffix) => `${location.file}${suffix}`)
}
