/**
 * @module jail/overlay/layer-host
 * The process that makes a jail's mounts: it lives in a private mount namespace of its own
 * (`unshare --mount --propagation private`), so nothing it mounts reaches the host, and every
 * bubblewrap of the jail starts inside that namespace (`nsenter`), so what it mounts on a
 * shared mount point after a jail started still reaches that jail. That is how a warm jail gets
 * a fresh overlay for each command while no process in it holds any capability: the mounts are
 * made out here, by the caller, and propagate in.
 *
 * Requests go one at a time over the host's standard input (see layer-host-script.ts); a
 * request that fails answers an error and changes nothing else. When the process is gone,
 * every request fails, so the jail fails closed.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import readline from 'node:readline'
import { EitriError } from '../../errors/eitri-error.ts'
import { LAYER_HOST_SCRIPT } from './layer-host-script.ts'
import { SerialQueue } from '../../util/serial-queue.ts'

/** How long the host may take to start or to answer one request before it counts as broken. */
const ANSWER_TIMEOUT_MS = 30_000

/** What `ready` can fail with, worded for the jail's availability report. */
export interface LayerHostUnavailable {
  readonly reason: string
  readonly fix: string
}

/** One layer host; see the module comment. */
export class LayerHost {
  readonly #child: ChildProcess
  readonly #pending: { resolve: (line: string) => void; timer: NodeJS.Timeout }[] = []
  readonly #queue = new SerialQueue()
  #gone: string | undefined
  /** Resolves once the host answered `ready`; rejects with why it cannot run. */
  readonly ready: Promise<void>

  readonly #userNamespace: boolean

  /**
   * `userNamespace`: for a caller that is not root, the host is root of a user namespace of its
   * own (the caller mapped to root), where it may mount overlays (`userxattr`) and binds.
   */
  constructor(options: { userNamespace?: boolean } = {}) {
    this.#userNamespace = options.userNamespace === true
    this.#child = spawn(
      'unshare',
      [
        ...(this.#userNamespace ? ['--user', '--map-root-user'] : []),
        '--mount',
        '--propagation',
        'private',
        '--',
        'perl',
        '-e',
        LAYER_HOST_SCRIPT,
      ],
      { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' } },
    )
    const stderr: Buffer[] = []
    this.#child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < 16) stderr.push(chunk)
    })
    const lines = readline.createInterface({ input: this.#child.stdout as NodeJS.ReadableStream })
    lines.on('line', (line) => {
      const waiting = this.#pending.shift()
      if (waiting === undefined) return
      clearTimeout(waiting.timer)
      waiting.resolve(line)
    })
    const ended = (why: string): void => {
      this.#gone ??= why
      for (const waiting of this.#pending.splice(0)) {
        clearTimeout(waiting.timer)
        waiting.resolve(`err ${why}`)
      }
    }
    this.#child.on('error', (error) => ended(`the layer host could not start: ${error.message}`))
    this.#child.on('exit', (code, signal) => {
      const detail = Buffer.concat(stderr).toString('utf8').trim().slice(0, 400)
      ended(
        `the layer host ended (${signal ?? `exit ${code}`})${detail === '' ? '' : `: ${detail}`}`,
      )
    })
    this.#child.stdin?.on('error', () => undefined)
    // A helper, not a reason to live: while no request waits for it, it never keeps eitri
    // running (it ends with eitri's end of its input).
    this.#child.unref()
    this.#holdWhileWaiting()
    this.ready = this.#answer().then((line) => {
      if (line !== 'ready') throw new EitriError('jail_unavailable', unavailableMessage(line))
    })
    this.ready.catch(() => undefined)
  }

  /** The host's process id: `nsenter --mount=/proc/PID/ns/mnt` enters its namespace. */
  get pid(): number | undefined {
    return this.#gone === undefined ? this.#child.pid : undefined
  }

  /** Arguments that start a program inside the host's mount namespace. */
  enter(): string[] {
    const pid = this.pid
    if (pid === undefined) throw new EitriError('jail_unavailable', this.#gone ?? 'no layer host')
    return this.#userNamespace
      ? ['nsenter', `--target=${pid}`, '--user', '--mount', '--preserve-credentials', '--']
      : ['nsenter', `--mount=/proc/${pid}/ns/mnt`, '--']
  }

  /** The namespaces {@link enter} enters, in its order, for a launcher that enters them itself. */
  namespaces(): { type: 'user' | 'mnt'; path: string }[] {
    const pid = this.pid
    if (pid === undefined) throw new EitriError('jail_unavailable', this.#gone ?? 'no layer host')
    return [
      ...(this.#userNamespace ? [{ type: 'user' as const, path: `/proc/${pid}/ns/user` }] : []),
      { type: 'mnt', path: `/proc/${pid}/ns/mnt` },
    ]
  }

  bind(source: string, target: string, access: 'ro' | 'rw'): Promise<void> {
    return this.#request('bind', source, target, access).then(() => undefined)
  }

  /** A bind of `source` on which files of `from` appear as owned by `to`. */
  idmappedBind(
    source: string,
    target: string,
    from: { uid: number; gid: number },
    to: { uid: number; gid: number },
  ): Promise<void> {
    return this.#request(
      'idbind',
      source,
      target,
      String(from.uid),
      String(from.gid),
      String(to.uid),
      String(to.gid),
    ).then(() => undefined)
  }

  share(target: string): Promise<void> {
    return this.#request('share', target).then(() => undefined)
  }

  /** An overlay on `target`; without `upper` (and `work`) a read-only one. */
  overlay(options: OverlayRequest): Promise<void> {
    return this.#request(...overlayWords(options)).then(() => undefined)
  }

  unmount(target: string): Promise<void> {
    return this.#request('umount', target).then(() => undefined)
  }

  /** For each folder of an upper layer, whether the overlay marked it opaque. */
  async opaque(attribute: string, folders: readonly string[]): Promise<boolean[]> {
    if (folders.length === 0) return []
    const answer = await this.#request('opaque', attribute, ...folders)
    return answer.split(' ').map((word) => word === '1')
  }

  /** Marks each path deleted for an overlay that has the folder as a lower layer. */
  async whiteout(paths: readonly string[]): Promise<void> {
    if (paths.length > 0) await this.#request('whiteout', ...paths)
  }

  /** Ends the host; its namespace, and every mount in it no jail still uses, goes with it. */
  close(): void {
    this.#child.stdin?.end()
    if (this.#child.exitCode === null) this.#child.kill('SIGKILL')
  }

  /**
   * Several requests in one exchange, run in order until one fails (the rest are not run):
   * one wake of the host instead of one each. Answers how many were done: all, or those before
   * the first failure, with its error.
   */
  async chain(
    requests: readonly (readonly string[])[],
  ): Promise<{ readonly done: number; readonly error?: Error }> {
    try {
      await this.#exchange(requests)
      return { done: requests.length }
    } catch (error) {
      const done = /\): after (\d+): /.exec((error as Error).message)?.[1]
      return { done: done === undefined ? 0 : Number(done), error: error as Error }
    }
  }

  #request(...words: string[]): Promise<string> {
    return this.#exchange([words])
  }

  #exchange(chain: readonly (readonly string[])[]): Promise<string> {
    return this.#queue.run(async () => {
      await this.ready
      if (this.#gone !== undefined) throw new EitriError('jail_unavailable', this.#gone)
      const answer = this.#answer()
      this.#child.stdin?.write(
        `${chain
          .map((words) => words.map((word) => Buffer.from(word).toString('hex')).join(' '))
          .join(' ; ')}\n`,
      )
      const line = await answer
      if (line === 'ok') return ''
      if (line.startsWith('ok ')) return line.slice(3)
      throw new EitriError(
        'jail_unavailable',
        `The jail could not prepare its mounts (${chain.map((words) => words[0]).join(', ')}): ${line.replace(/^err /, '')}`,
      )
    })
  }

  /** Keeps the event loop alive exactly while an answer is awaited. */
  #holdWhileWaiting(): void {
    const waiting = this.#pending.length > 0
    for (const stream of [this.#child.stdin, this.#child.stdout, this.#child.stderr]) {
      const handle = stream as unknown as { ref?: () => void; unref?: () => void } | null
      if (waiting) handle?.ref?.()
      else handle?.unref?.()
    }
  }

  #answer(): Promise<string> {
    if (this.#gone !== undefined) return Promise.resolve(`err ${this.#gone}`)
    return new Promise<string>((resolve) => {
      const timer = setTimeout(() => {
        this.#gone ??= 'the layer host stopped answering'
        this.close()
        resolve(`err ${this.#gone}`)
      }, ANSWER_TIMEOUT_MS)
      timer.unref()
      this.#pending.push({ resolve, timer })
      this.#holdWhileWaiting()
    }).finally(() => this.#holdWhileWaiting())
  }
}

/** An overlay's layers, target and options (see {@link LayerHost.overlay}). */
export interface OverlayRequest {
  readonly lower: string
  readonly upper?: string
  readonly work?: string
  readonly target: string
  readonly options?: string
}

/** The words of an `overlay` request, for {@link LayerHost.chain}. */
export function overlayWords(options: OverlayRequest): string[] {
  return [
    'overlay',
    options.lower,
    options.upper ?? '',
    options.work ?? '',
    options.target,
    options.options ?? '',
  ]
}

function unavailableMessage(line: string): string {
  if (line.startsWith('unsupported ')) return `The layer host cannot run: ${line.slice(12)}`
  return `The layer host cannot run: ${line.replace(/^err /, '')}`
}
