/**
 * @module jail/jail
 * The bubblewrap jail for one workspace: runs programs confined, in the foreground with a
 * deadline or in the background until killed, and fails closed: when the jail cannot start,
 * nothing runs.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { EitriError } from '../errors/eitri-error.ts'
import type { WorkspaceView } from '../tool/workspace-view.ts'
import type { DirectoryTree } from '../workspace/directory-tree.ts'
import { DEFAULT_MAX_OUTPUT_CHARS } from './bounded-output.ts'
import { buildBwrapArgs } from './bwrap-args.ts'
import { closeInheritedDescriptors } from './fd-hygiene.ts'
import { jailEnvironment } from './jail-environment.ts'
import { jailIdentity, type HostIdentity } from './jail-identity.ts'
import { explainProbeFailure, type JailAvailability } from './jail-probe.ts'
import { DEFAULT_JAIL_LIMITS, type JailBind, type JailLimits, type JailSpec } from './jail-spec.ts'
import { JailedProcess, type JailedExit } from './jailed-process.ts'
import { planProtectedMounts, removeMountPoints, type Placeholders } from './protected-mounts.ts'
import { WorkspaceMirror, type SyncReport } from './workspace-mirror.ts'

/** Default wall-clock limit of a foreground run. */
export const DEFAULT_JAIL_TIMEOUT_MS = 60_000

/** What a jail is built on. */
export interface JailOptions {
  /** The workspace folder. */
  readonly tree: DirectoryTree
  /** The same folder behind the path policy: what a mirror writes back goes through it. */
  readonly view: WorkspaceView
  /** Extra protected patterns from the configuration. */
  readonly protectedPaths?: readonly string[]
  /** Host paths of eitri's state and configuration, hidden if inside the workspace. */
  readonly privatePaths?: readonly string[]
  /** The bubblewrap program. @default 'bwrap' */
  readonly bwrap?: string
  /** Where the jail keeps placeholders and, for a root caller, the mirror. @default os.tmpdir() */
  readonly temporaryRoot?: string
}

/** One program to run. */
export interface JailRequest {
  readonly command: readonly string[]
  /** `read-only` mounts the workspace read-only; `workspace-write` read-write. */
  readonly access: 'read-only' | 'workspace-write'
  /** @default 60 s; ignored by `start` */
  readonly timeoutMs?: number
  /** Characters kept per stream. @default 30,000 */
  readonly maxOutputChars?: number
  readonly limits?: Partial<JailLimits>
  /** Extra environment names (never secrets). */
  readonly environment?: Readonly<Record<string, string>>
  /** Further binds: a scratch folder, the Node binary. */
  readonly binds?: readonly JailBind[]
  readonly cwd?: string
  readonly stdin?: string
  readonly signal?: AbortSignal
}

/** How a foreground run ended and what it printed. */
export interface JailResult extends JailedExit {
  readonly stdout: string
  readonly stderr: string
  /** True when either stream was cut. */
  readonly truncated: boolean
  /** For a mirrored workspace: what went back to the host and what the policy refused. */
  readonly sync?: SyncReport
}

/** A program running in the background. */
export interface JailJob {
  readonly process: JailedProcess
  /** Resolves after the program ended and its changes went back to the host. */
  readonly finished: Promise<JailResult>
}

/** Runs programs in bubblewrap for one workspace. */
export class Jail implements AsyncDisposable {
  readonly identity: HostIdentity
  readonly #options: JailOptions
  readonly #bwrap: string
  #availability: Promise<JailAvailability> | undefined
  #support: { root: string; placeholders: Placeholders } | undefined
  #mirror: WorkspaceMirror | undefined
  #serial: Promise<unknown> = Promise.resolve()
  #activeRuns = 0
  #pendingMountPoints = new Set<string>()
  readonly #jobs = new Set<JailedProcess>()
  #closed = false

  constructor(options: JailOptions) {
    this.#options = options
    this.#bwrap = options.bwrap ?? 'bwrap'
    this.identity = jailIdentity()
  }

  /** Whether jails run here; probed once with a real jailed command. */
  availability(): Promise<JailAvailability> {
    this.#availability ??= this.#probe()
    return this.#availability
  }

  /**
   * Runs a program to completion (or its deadline).
   *
   * @throws EitriError `jail_unavailable` with the reason and the fix; nothing ran.
   */
  async run(request: JailRequest): Promise<JailResult> {
    const job = await this.#launch(request, request.timeoutMs ?? DEFAULT_JAIL_TIMEOUT_MS)
    return job.finished
  }

  /** Starts a program in the background; it runs until it ends, is killed, or the jail closes. */
  async start(request: Omit<JailRequest, 'timeoutMs'>): Promise<JailJob> {
    return this.#launch(request, undefined)
  }

  /** Kills every job and removes the jail's temporary folders. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    for (const job of this.#jobs) job.kill()
    await Promise.allSettled([...this.#jobs].map((job) => job.exited))
    await this.#serial.catch(() => undefined)
    removeMountPoints([...this.#pendingMountPoints])
    if (this.#mirror !== undefined) fs.rmSync(this.#mirror.root, { recursive: true, force: true })
    if (this.#support !== undefined) fs.rmSync(this.#support.root, { recursive: true, force: true })
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  async #launch(request: JailRequest, timeoutMs: number | undefined): Promise<JailJob> {
    if (this.#closed) throw new EitriError('jail_unavailable', 'The jail is closed; nothing ran.')
    const availability = await this.availability()
    if (!availability.available) {
      throw new EitriError(
        'jail_unavailable',
        `The jail is unavailable, so nothing ran: ${availability.reason}. To fix: ${availability.fix}.`,
      )
    }
    const writable = request.access === 'workspace-write'
    const mirror = this.identity.dropped ? this.#ensureMirror() : undefined
    if (mirror !== undefined) await this.#serialize(() => mirror.syncIn())
    const root = mirror?.root ?? this.#options.tree.root
    const plan = planProtectedMounts({
      root,
      placeholders: this.#ensureSupport().placeholders,
      extraPatterns: this.#options.protectedPaths ?? [],
      // A mirror never holds private paths: they are not copied in, and refused on the way out.
      privatePaths: mirror === undefined ? this.#privateRelativePaths() : [],
      protect: writable,
    })
    for (const mountPoint of plan.createdMountPoints) this.#pendingMountPoints.add(mountPoint)
    const spec: JailSpec = {
      command: request.command,
      workspace: root,
      workspaceAccess: writable ? 'read-write' : 'read-only',
      overlays: plan.overlays,
      hiddenFolders: plan.hiddenFolders,
      binds: request.binds ?? [],
      environment: jailEnvironment(request.environment),
      limits: { ...DEFAULT_JAIL_LIMITS, ...request.limits },
      ...(request.cwd === undefined ? {} : { cwd: request.cwd }),
    }
    this.#activeRuns++
    const process = new JailedProcess({
      bwrap: this.#bwrap,
      args: buildBwrapArgs(spec),
      identity: this.identity,
      maxOutputChars: request.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
      timeoutMs,
      signal: request.signal,
      stdin: request.stdin,
    })
    this.#jobs.add(process)
    const finished = process.exited.then(async (exit): Promise<JailResult> => {
      this.#jobs.delete(process)
      if (--this.#activeRuns === 0) {
        removeMountPoints([...this.#pendingMountPoints])
        this.#pendingMountPoints.clear()
      }
      const sync =
        mirror !== undefined && writable && !this.#closed
          ? await this.#serialize(() => mirror.syncOut())
          : undefined
      return {
        ...exit,
        stdout: process.stdout.text(),
        stderr: process.stderr.text(),
        truncated: process.stdout.droppedChars + process.stderr.droppedChars > 0,
        ...(sync === undefined ? {} : { sync }),
      }
    })
    return { process, finished }
  }

  async #probe(): Promise<JailAvailability> {
    closeInheritedDescriptors()
    const support = this.#ensureSupport()
    const spec: JailSpec = {
      command: ['/bin/true'],
      workspace: support.placeholders.emptyFolder,
      workspaceAccess: 'read-only',
      overlays: [],
      hiddenFolders: [],
      binds: [],
      environment: jailEnvironment(),
      limits: DEFAULT_JAIL_LIMITS,
    }
    const probe = new JailedProcess({
      bwrap: this.#bwrap,
      args: buildBwrapArgs(spec),
      identity: this.identity,
      maxOutputChars: 4000,
      timeoutMs: 10_000,
    })
    const exit = await probe.exited
    if (exit.exitCode === 0) return { available: true }
    return explainProbeFailure({
      spawnError: exit.spawnError,
      exitCode: exit.exitCode,
      stderr: probe.stderr.text(),
    })
  }

  #ensureSupport(): { root: string; placeholders: Placeholders } {
    if (this.#support !== undefined) return this.#support
    const root = fs.mkdtempSync(
      path.join(this.#options.temporaryRoot ?? os.tmpdir(), 'eitri-jail-'),
    )
    fs.chmodSync(root, 0o755)
    const emptyFile = path.join(root, 'empty-file')
    const emptyFolder = path.join(root, 'empty-folder')
    fs.writeFileSync(emptyFile, '', { mode: 0o444 })
    fs.mkdirSync(emptyFolder, { mode: 0o555 })
    fs.chmodSync(emptyFolder, 0o555)
    this.#support = { root, placeholders: { emptyFile, emptyFolder } }
    return this.#support
  }

  #ensureMirror(): WorkspaceMirror {
    if (this.#mirror !== undefined) return this.#mirror
    const root = fs.mkdtempSync(
      path.join(this.#options.temporaryRoot ?? os.tmpdir(), 'eitri-mirror-'),
    )
    fs.chownSync(root, this.identity.uid, this.identity.gid)
    fs.chmodSync(root, 0o700)
    const privateRelative = this.#privateRelativePaths()
    this.#mirror = new WorkspaceMirror({
      root,
      tree: this.#options.tree,
      view: this.#options.view,
      owner: this.identity,
      isPrivate: (relative) =>
        privateRelative.some((hidden) => relative === hidden || relative.startsWith(`${hidden}/`)),
    })
    return this.#mirror
  }

  #privateRelativePaths(): string[] {
    const root = this.#options.tree.root
    return (this.#options.privatePaths ?? [])
      .map((hostPath) => path.relative(root, hostPath))
      .filter(
        (relative) => relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative),
      )
  }

  #serialize<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#serial.then(work, work)
    this.#serial = next.catch(() => undefined)
    return next
  }
}
