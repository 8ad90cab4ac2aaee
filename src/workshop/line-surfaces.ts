/**
 * @module workshop/line-surfaces
 * What each line of work offers tools: its files behind the path policy and its jail. Main's
 * surface is the live folder; a fork's is its tree in the history, with a jail of its own
 * whose programs see main's folder below a layer of the fork's differences from it (or, where
 * overlays cannot run, a mirror synced from the fork's tree).
 */
import type { ProgramPathSource } from '../access/git-metadata/judge-git-write.ts'
import { createWorkspaceView, type ConfinedWorkspace } from '../access/confined-workspace.ts'
import { Jail, type JailOptions } from '../jail/jail.ts'
import path from 'node:path'
import { FORK_KEEP_FOLDER, type ForkKeep } from '../jail/overlay/fork-keep.ts'
import type { ForkBelow, ForkDifference } from '../jail/overlay/fork-layer.ts'
import { MAIN_LINE } from '../ports/line-control.ts'
import { forkFolder, readForkById } from '../workspace/fork-registry.ts'
import type { WorkspaceLines } from '../workspace/workspace-lines.ts'

/** One line's view and jail. */
export interface LineSurface {
  readonly line: string
  readonly view: ConfinedWorkspace
  readonly jail: Jail
}

/** The surfaces of a workspace's lines, made on first use and kept. */
export class LineSurfaces {
  readonly #lines: WorkspaceLines
  readonly #main: LineSurface
  readonly #jailOptions: Omit<JailOptions, 'tree' | 'view'>
  readonly #protectedPaths: readonly string[]
  readonly #programs: ProgramPathSource | undefined
  readonly #hiddenPaths: readonly string[]
  readonly #stateDir: string
  readonly #surfaces = new Map<string, Promise<LineSurface>>()
  /** Jails of dropped lines still closing. */
  readonly #closing = new Map<string, Promise<void>>()

  constructor(options: {
    lines: WorkspaceLines
    main: LineSurface
    jail: Omit<JailOptions, 'tree' | 'view'>
    protectedPaths: readonly string[]
    /** Main's repositories' program paths: a fork holds no .git, but merges into main. */
    programs?: ProgramPathSource
    /** eitri's state and configuration inside the workspace: hidden in every line too. */
    hiddenPaths: readonly string[]
    /** The workspace's state folder: each open fork keeps its jail's layer there. */
    stateDir: string
  }) {
    this.#stateDir = options.stateDir
    this.#programs = options.programs
    this.#lines = options.lines
    this.#main = options.main
    this.#jailOptions = options.jail
    this.#protectedPaths = options.protectedPaths
    this.#hiddenPaths = options.hiddenPaths
  }

  /** The surface of a line (by id; `main` for main). */
  surface(line: string): Promise<LineSurface> {
    if (line === MAIN_LINE) return Promise.resolve(this.#main)
    let surface = this.#surfaces.get(line)
    if (surface === undefined) {
      surface = (async () => {
        const tree = await this.#lines.tree(line)
        // A fork never holds eitri's state (history excludes it), and must not gain a file
        // there either: merged into main, it would land in the real state or configuration.
        const hiddenPaths = this.#hiddenPaths
        const view = createWorkspaceView({
          tree,
          line,
          protectedPaths: this.#protectedPaths,
          hiddenPaths,
          ...(this.#programs === undefined ? {} : { programs: this.#programs }),
        })
        const below = this.#below(line)
        return {
          line,
          view,
          jail: new Jail({
            ...this.#jailOptions,
            tree,
            view,
            hiddenPaths,
            ...(below === undefined ? {} : { below }),
          }),
        }
      })()
      this.#surfaces.set(line, surface)
    }
    return surface
  }

  /** Main's folder and where a fork differs from it, for the fork's overlays. */
  #below(line: string): ForkBelow | undefined {
    const lines = this.#lines
    const root = lines.main.root
    if (root === undefined) return undefined
    const stateDir = this.#stateDir
    return {
      root,
      // A merged fork is read-only: what its commands keep from now on need not outlast them.
      ...(forkWantsLayer(stateDir, line) ? { keep: forkKeep(stateDir, line) } : {}),
      differences: async () =>
        (await lines.forkDifferences(line)).flatMap(({ path, after }): ForkDifference[] => {
          if (after === undefined) return [{ path, fork: undefined }]
          const { kind, oid } = after
          // A gitlink (a submodule's commit) is no file: main's folder shows through.
          return kind === 'file' || kind === 'executable' || kind === 'symlink'
            ? [{ path, fork: { kind, oid } }]
            : []
        }),
      blob: async (oid) => (await lines.history.store.require(oid)).content,
    }
  }

  /**
   * Forgets a discarded line's surface, closing its jail (its fork's kept layer goes with it);
   * resolves once closed, also when a drop already under way closes it.
   */
  drop(line: string): Promise<void> {
    const surface = this.#surfaces.get(line)
    if (surface !== undefined) {
      this.#surfaces.delete(line)
      const closing = (async () => {
        try {
          await (await surface).jail.close()
        } catch {
          // a surface that never opened has no jail to close
        } finally {
          this.#closing.delete(line)
        }
      })()
      this.#closing.set(line, closing)
    }
    return this.#closing.get(line) ?? Promise.resolve()
  }

  async close(): Promise<void> {
    for (const line of [...this.#surfaces.keys()]) await this.drop(line)
    await Promise.all(this.#closing.values())
  }
}

/** Where fork `id` keeps its jail's layer across restarts, and whether it still wants it. */
export function forkKeep(stateDir: string, id: string): ForkKeep {
  return {
    folder: path.join(forkFolder(stateDir, id), FORK_KEEP_FOLDER),
    wanted: () => forkWantsLayer(stateDir, id),
  }
}

/** Whether fork `id` is open and not merged: only such a fork's layer is kept. */
export function forkWantsLayer(stateDir: string, id: string): boolean {
  const fork = readForkById(stateDir, id)
  return fork !== undefined && fork.merged === undefined
}
