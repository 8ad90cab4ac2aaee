/**
 * @module jail/memory-cgroup
 * How the jail bounds memory. An address-space limit (RLIMIT_AS) counts what a program
 * reserves, not what it uses, and WebAssembly, the JVM and Go reserve gigabytes they never
 * touch: they fail under it. So a jail's memory is bounded by a memory cgroup, which counts
 * pages really used by all its processes together, wherever eitri may create one: always
 * below eitri's own cgroup (read from /proc/self/cgroup), never anywhere else, one per jailed
 * process, removed when it ends. Where none can be made (no memory controller, no write
 * access, a cgroup v2 parent that cannot delegate memory), each process gets RLIMIT_DATA
 * instead: it counts private writable memory, not the reservations WebAssembly makes.
 */
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

/** What bounds a jail's memory. */
export type MemoryBound = 'cgroup' | 'rlimit-data'

/** How memory is bounded here, and why not by a cgroup when it is not. */
export type MemorySupport =
  | { readonly bound: 'cgroup'; readonly version: 1 | 2; readonly parent: string }
  | { readonly bound: 'rlimit-data'; readonly reason: string }

/**
 * The shell step that moves itself into a cgroup, then becomes the jail's launcher: writing 0
 * to `cgroup.procs` moves the writer, and everything it starts is born inside. It runs with the
 * caller's identity (root may move itself; the jail's user may not), before any privilege drop.
 */
const JOIN_SCRIPT =
  'echo 0 > "$1" || { echo "eitri: could not enter the memory cgroup $1" >&2; exit 125; }; shift; exec "$@"'

/** Where the kernel files are; tests point them elsewhere. */
export interface CgroupFiles {
  readonly selfCgroup: string
  readonly mountInfo: string
}

const SYSTEM_FILES: CgroupFiles = {
  selfCgroup: '/proc/self/cgroup',
  mountInfo: '/proc/self/mountinfo',
}

/** One process's memory cgroup. */
/** What a start needs of the memory cgroup it runs in (a job's view of a jail's: prestarted-jail.ts). */
export type MemoryAccount = Pick<MemoryCgroup, 'launch' | 'oomKills' | 'remove'>

export class MemoryCgroup {
  readonly folder: string
  readonly version: 1 | 2

  constructor(folder: string, version: 1 | 2) {
    this.folder = folder
    this.version = version
  }

  /** The file a process writes 0 to, to move itself into this cgroup. */
  get procsFile(): string {
    return path.join(this.folder, 'cgroup.procs')
  }

  /** The launcher that runs `command` inside this cgroup. */
  launch(command: string, args: readonly string[]): { command: string; args: string[] } {
    return {
      command: '/bin/sh',
      args: [
        '-c',
        JOIN_SCRIPT,
        'eitri-memory',
        path.join(this.folder, 'cgroup.procs'),
        command,
        ...args,
      ],
    }
  }

  /** How many processes the kernel killed in this cgroup for going over its limit. */
  oomKills(): number {
    const file = this.version === 1 ? 'memory.oom_control' : 'memory.events'
    try {
      const text = fs.readFileSync(path.join(this.folder, file), 'utf8')
      return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0)
    } catch {
      return 0
    }
  }

  /**
   * Removes the cgroup once its processes are gone. The kernel may need a moment after the
   * last one exited, so it retries for a while; a cgroup still busy after that is left.
   */
  async remove(): Promise<void> {
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        fs.rmdirSync(this.folder)
        return
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        if (code === 'ENOENT') return
        if (code !== 'EBUSY') return
      }
      await new Promise((resolve) => setTimeout(resolve, 20 * Math.min(attempt + 1, 10)))
    }
  }
}

/**
 * Own memory cgroups (`version` and folder) whose probe found this process may move programs
 * into a child cgroup: every jail of the process shares that answer, as it shares the
 * bubblewrap probe's, so a second jail (a fork's) starts no probe process of its own. Only a
 * success is remembered; a failure is probed again. The own cgroup is read again each time
 * (two small files): a process moved elsewhere is probed there.
 */
const JOINABLE = new Set<string>()

/** Creates memory cgroups below this process's own, once it has found that it can. */
export class MemoryCgroups {
  readonly #files: CgroupFiles
  #support: MemorySupport | undefined
  #next = 1

  /** `enabled: false` bounds memory by RLIMIT_DATA alone, as where no cgroup can be made. */
  constructor(options: { readonly files?: CgroupFiles; readonly enabled?: boolean } = {}) {
    this.#files = options.files ?? SYSTEM_FILES
    if (options.enabled === false)
      this.#support = {
        bound: 'rlimit-data',
        reason: 'memory cgroups are turned off for this jail',
      }
  }

  /**
   * How memory is bounded here; probed once by creating, joining and removing a cgroup (once a
   * process: a success is shared by every jail, see {@link JOINABLE}).
   */
  support(): MemorySupport {
    if (this.#support !== undefined) return this.#support
    const probe = this.#probeCgroup()
    if ('bound' in probe) return (this.#support = probe)
    const { command, args } = probe.cgroup.launch('/bin/true', [])
    const joined = spawnSync(command, args, { stdio: 'ignore', timeout: 10_000 }).status === 0
    return (this.#support = probe.outcome(joined))
  }

  /**
   * Probes as {@link support} does, without blocking the event loop: a jail runs it beside its
   * own probe, so its first command does not wait for a synchronous start.
   */
  async prepare(): Promise<MemorySupport> {
    if (this.#support !== undefined) return this.#support
    const probe = this.#probeCgroup()
    if ('bound' in probe) return (this.#support ??= probe)
    const { command, args } = probe.cgroup.launch('/bin/true', [])
    const joined = await new Promise<boolean>((resolve) => {
      const child = spawn(command, args, { stdio: 'ignore', timeout: 10_000 })
      child.once('error', () => resolve(false))
      child.once('exit', (code) => resolve(code === 0))
    })
    const outcome = probe.outcome(joined)
    // A synchronous probe that ran meanwhile has decided already.
    return (this.#support ??= outcome)
  }

  /**
   * A new cgroup limited to `limitBytes`, or undefined when cgroups are not available here or
   * this one could not be made (then the caller falls back to RLIMIT_DATA).
   */
  create(limitBytes: number): MemoryCgroup | undefined {
    const support = this.support()
    if (support.bound !== 'cgroup') return undefined
    try {
      return makeCgroup(support, `eitri-${process.pid}-${this.#next++}`, limitBytes)
    } catch {
      return undefined
    }
  }

  /**
   * A probe cgroup to join, and what joining it (or not) means; or the answer already, when
   * none can be made. The cgroup is removed once the outcome is known.
   */
  #probeCgroup():
    | MemorySupport
    | { readonly cgroup: MemoryCgroup; readonly outcome: (joined: boolean) => MemorySupport } {
    const found = findOwnMemoryCgroup(this.#files)
    if ('reason' in found) return { bound: 'rlimit-data', reason: found.reason }
    const key = `${found.version}\0${found.parent}`
    if (JOINABLE.has(key)) return { bound: 'cgroup', ...found }
    let cgroup: MemoryCgroup
    try {
      cgroup = makeCgroup(found, `eitri-${process.pid}-probe-${this.#next++}`, 64 * 1024 ** 2)
    } catch (error) {
      return {
        bound: 'rlimit-data',
        reason: `no memory cgroup can be created below ${found.parent}: ${(error as Error).message}`,
      }
    }
    return {
      cgroup,
      outcome: (joined) => {
        void cgroup.remove()
        if (joined) JOINABLE.add(key)
        return joined
          ? { bound: 'cgroup', ...found }
          : {
              bound: 'rlimit-data',
              reason: `this process may not move programs into a memory cgroup below ${found.parent}`,
            }
      },
    }
  }
}

/**
 * This process's own memory cgroup and its folder: the v1 memory controller's (a hybrid
 * system names it in its own line), else the v2 unified one's if it offers memory.
 */
export function findOwnMemoryCgroup(
  files: CgroupFiles = SYSTEM_FILES,
): { readonly version: 1 | 2; readonly parent: string } | { readonly reason: string } {
  let membership: string
  let mounts: string
  try {
    membership = fs.readFileSync(files.selfCgroup, 'utf8')
    mounts = fs.readFileSync(files.mountInfo, 'utf8')
  } catch {
    return { reason: 'this system shows no cgroups (no /proc/self/cgroup)' }
  }
  const lines = membership.split('\n').map((line) => /^(\d+):([^:]*):(.*)$/.exec(line))
  const v1 = lines.find((match) => match?.[2]?.split(',').includes('memory'))
  if (v1?.[3] !== undefined) {
    const folder = mountedFolder(mounts, 'cgroup', v1[3])
    if (folder === undefined) return { reason: 'the memory cgroup controller is not mounted here' }
    return { version: 1, parent: folder }
  }
  const v2 = lines.find((match) => match?.[1] === '0' && match[2] === '')
  if (v2?.[3] === undefined) return { reason: 'this process is in no memory cgroup' }
  const folder = mountedFolder(mounts, 'cgroup2', v2[3])
  if (folder === undefined) return { reason: 'the cgroup v2 hierarchy is not mounted here' }
  let controllers = ''
  try {
    controllers = fs.readFileSync(path.join(folder, 'cgroup.controllers'), 'utf8')
  } catch {
    // treated as no controllers
  }
  if (!controllers.split(/\s+/).includes('memory'))
    return { reason: `the memory controller is not delegated to ${folder}` }
  return { version: 2, parent: folder }
}

/** The folder of `cgroupPath` in the hierarchy mounted with `fsType` (and, for v1, memory). */
function mountedFolder(mountInfo: string, fsType: string, cgroupPath: string): string | undefined {
  for (const line of mountInfo.split('\n')) {
    const [before, after] = line.split(' - ')
    if (before === undefined || after === undefined) continue
    const [type, , superOptions = ''] = after.split(' ')
    if (type !== fsType) continue
    if (fsType === 'cgroup' && !superOptions.split(',').includes('memory')) continue
    const fields = before.split(' ')
    const root = unescapeMount(fields[3] ?? '')
    const mountPoint = unescapeMount(fields[4] ?? '')
    const relative = path.posix.relative(root, cgroupPath)
    if (relative.startsWith('..') || path.posix.isAbsolute(relative)) continue
    return path.join(mountPoint, relative)
  }
  return undefined
}

/** mountinfo writes a space, tab, newline or backslash in a path as an octal escape. */
function unescapeMount(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) =>
    String.fromCharCode(Number.parseInt(octal, 8)),
  )
}

/** Creates the cgroup `name` below `parent` with its limit, or throws (and leaves nothing). */
function makeCgroup(
  support: { readonly version: 1 | 2; readonly parent: string },
  name: string,
  limitBytes: number,
): MemoryCgroup {
  const folder = path.join(support.parent, name)
  fs.mkdirSync(folder)
  try {
    const limit = String(Math.floor(limitBytes))
    if (support.version === 1) {
      fs.writeFileSync(path.join(folder, 'memory.limit_in_bytes'), limit)
      // Without this, a program over the limit would go on in swap.
      writeIfPresent(path.join(folder, 'memory.memsw.limit_in_bytes'), limit)
    } else {
      if (!fs.existsSync(path.join(folder, 'memory.max'))) enableMemory(support.parent)
      fs.writeFileSync(path.join(folder, 'memory.max'), limit)
      writeIfPresent(path.join(folder, 'memory.swap.max'), '0')
    }
    return new MemoryCgroup(folder, support.version)
  } catch (error) {
    fs.rmdirSync(folder)
    throw error
  }
}

/** Turns the memory controller on for the children of our own cgroup (v2), if allowed. */
function enableMemory(parent: string): void {
  fs.writeFileSync(path.join(parent, 'cgroup.subtree_control'), '+memory')
}

function writeIfPresent(file: string, value: string): void {
  try {
    fs.writeFileSync(file, value)
  } catch {
    // swap accounting is off: there is no swap to bound
  }
}
