/**
 * @module jail/jail-program-session
 * The programs of one connection: foreground runs with a deadline, and background jobs that
 * run until they end, are killed, or the session closes. Every program runs in the jail.
 */
import { randomUUID } from 'node:crypto'
import { EitriError } from '../errors/eitri-error.ts'
import { ACCESS_LEVELS, type AccessLevel } from '../ports/access-context.ts'
import type {
  JobRead,
  ProgramRequest,
  ProgramRun,
  ProgramSession,
} from '../ports/program-session.ts'
import { DEFAULT_MAX_OUTPUT_CHARS, RollingOutput } from '../util/bounded-output.ts'
import { DEFAULT_JAIL_TIMEOUT_MS, type Jail, type JailJob, type JailResult } from './jail.ts'
import { runUnconfined } from './unconfined-run.ts'
import { wantedNetwork } from '../bubblewrap/network-note.ts'

/** Where an approved run outside the jail happens. */
export interface OutsideOptions {
  /** The workspace's host folder. */
  readonly cwd: string
  /** The host environment it gets: a person approved full access for it. */
  readonly environment: Readonly<Record<string, string | undefined>>
}

interface Job {
  readonly id: string
  readonly label: string
  readonly access: ProgramRequest['access']
  readonly job: JailJob
  readonly stdout: RollingOutput
  readonly stderr: RollingOutput
  exit: JailResult | undefined
  /** The end of each stream read so far, so a line split between two reads is still seen. */
  readTail: { stdout: string; stderr: string }
  /** Whether anything read so far showed the job wanted the network (network-note.ts). */
  wantedNetwork: boolean
}

/** Characters of each stream kept between reads: more than the longest line looked for. */
const READ_TAIL_CHARS = 512

/** Most jobs one session may have at once. */
export const MAX_JOBS_PER_SESSION = 16

/** A {@link ProgramSession} backed by a jail. */
export class JailProgramSession implements ProgramSession {
  readonly #jail: Jail
  readonly #outside: OutsideOptions
  readonly #onJob: ((finished: Promise<unknown>) => void) | undefined
  readonly #jobs = new Map<string, Job>()
  #nextId = 1
  /** This session's programs as one sharer of a warm jail: another session's never meet them. */
  readonly #sharer = `programs-${randomUUID()}`

  /**
   * `outside` says where and with what environment an approved unconfined run happens;
   * `onJob` hears of each background job started, with the promise of its end (its changes
   * reach the workspace until then).
   */
  constructor(
    jail: Jail,
    outside: OutsideOptions,
    options: { onJob?: (finished: Promise<unknown>) => void } = {},
  ) {
    this.#jail = jail
    this.#outside = outside
    this.#onJob = options.onJob
  }

  async runOutsideJail(request: Omit<ProgramRequest, 'access'>): Promise<ProgramRun> {
    return runUnconfined({
      command: request.command,
      cwd: this.#outside.cwd,
      environment: this.#outside.environment,
      timeoutMs: request.timeoutMs ?? DEFAULT_JAIL_TIMEOUT_MS,
      maxOutputChars: request.maxOutputChars,
      signal: request.signal,
    })
  }

  async stopJobsWiderThan(level: AccessLevel): Promise<string[]> {
    const wider = [...this.#jobs.values()].filter(
      (job) =>
        job.exit === undefined && ACCESS_LEVELS.indexOf(job.access) > ACCESS_LEVELS.indexOf(level),
    )
    await Promise.all(wider.map((job) => this.killJob(job.id)))
    return wider.map((job) => job.id)
  }

  availability(): ReturnType<Jail['availability']> {
    return this.#jail.availability()
  }

  async run(request: ProgramRequest): Promise<ProgramRun> {
    const result = await this.#jail.run({ ...request, sharer: this.#sharer })
    return {
      ...result,
      ...(result.sync === undefined || result.sync.refused.length === 0
        ? {}
        : { refused: result.sync.refused }),
      ...(result.sync === undefined || result.sync.kept.length === 0
        ? {}
        : { kept: result.sync.kept }),
      ...(result.sync?.hidden === undefined || result.sync.hidden.length === 0
        ? {}
        : { hidden: result.sync.hidden }),
    }
  }

  async startJob(
    request: Omit<ProgramRequest, 'timeoutMs' | 'signal'> & { readonly label: string },
  ): Promise<string> {
    const running = [...this.#jobs.values()].filter((job) => job.exit === undefined).length
    if (running >= MAX_JOBS_PER_SESSION) {
      throw new EitriError(
        'permission_denied',
        `Too many background jobs (${running}); end some with shell_kill first.`,
      )
    }
    const limit = request.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS
    const stdout = new RollingOutput(limit)
    const stderr = new RollingOutput(limit)
    const job = await this.#jail.start({
      command: request.command,
      access: request.access,
      // A jail started ahead that ran one of this session's jobs takes only its later ones.
      sharer: this.#sharer,
      maxOutputChars: 0,
      onOutput: (stream, chunk) => (stream === 'stdout' ? stdout : stderr).push(chunk),
    })
    const id = `job-${this.#nextId++}`
    const entry: Job = {
      id,
      label: request.label,
      access: request.access,
      job,
      stdout,
      stderr,
      exit: undefined,
      readTail: { stdout: '', stderr: '' },
      wantedNetwork: false,
    }
    this.#jobs.set(id, entry)
    void job.finished.then((exit) => {
      entry.exit = exit
    })
    this.#onJob?.(job.finished)
    return id
  }

  readJob(id: string): JobRead | undefined {
    const entry = this.#jobs.get(id)
    if (entry === undefined) return undefined
    const stdout = entry.stdout.read()
    const stderr = entry.stderr.read()
    // Judged over all the job printed, not this read alone: a model that read the failure while
    // the job ran still hears why it failed when it reads the exit.
    const tail = entry.readTail
    entry.wantedNetwork ||=
      wantedNetwork(`${tail.stdout}${stdout}`) || wantedNetwork(`${tail.stderr}${stderr}`)
    entry.readTail = {
      stdout: `${tail.stdout}${stdout}`.slice(-READ_TAIL_CHARS),
      stderr: `${tail.stderr}${stderr}`.slice(-READ_TAIL_CHARS),
    }
    return {
      id,
      command: entry.label,
      stdout,
      stderr,
      running: entry.exit === undefined,
      exitCode: entry.exit?.exitCode ?? null,
      wantedNetwork: entry.wantedNetwork,
    }
  }

  async killJob(id: string): Promise<JobRead | undefined> {
    const entry = this.#jobs.get(id)
    if (entry === undefined) return undefined
    entry.job.process.kill()
    entry.exit = await entry.job.finished
    const read = this.readJob(id)
    this.#jobs.delete(id)
    return read
  }

  async close(): Promise<void> {
    await Promise.all([...this.#jobs.keys()].map((id) => this.killJob(id)))
  }
}
