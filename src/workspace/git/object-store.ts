/**
 * @module workspace/git/object-store
 * The objects of eitri's history repository: read through one long-running
 * `git cat-file --batch` (packed or loose, git knows), written by eitri as loose objects
 * (a hash, a compressed file, a rename), so a write costs no git process.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { deflateSync } from 'node:zlib'
import { EitriError } from '../../errors/eitri-error.ts'
import { encodeObject } from './git-objects.ts'
import { gitEnvironment } from './run-git.ts'

/** An object read back. */
export interface GitObject {
  readonly type: 'blob' | 'tree' | 'commit' | 'tag'
  readonly content: Buffer
}

interface Pending {
  readonly oid: string
  readonly resolve: (object: GitObject | undefined) => void
  readonly reject: (error: Error) => void
}

/** Most bytes of blobs kept after their read (a file's stat, then its read, in a fork). */
const RECENT_BLOB_BYTES = 32 * 1024 * 1024
/** Most blobs kept after their read. */
const RECENT_BLOBS = 16
/** Most blob sizes remembered (about 100 bytes each); past it they are forgotten at once. */
const MAX_KNOWN_SIZES = 200_000

/** Reads and writes the objects of one repository. */
export class ObjectStore {
  readonly gitDir: string
  #reader: ChildProcessWithoutNullStreams | undefined
  #buffer: Buffer = Buffer.alloc(0)
  readonly #pending: Pending[] = []
  /** Trees and commits are immutable and small: kept once read. */
  readonly #cache = new Map<string, GitObject>()
  /**
   * The blobs read last, newest last, at most {@link RECENT_BLOB_BYTES} in all: a file's size
   * and then its content (a fork's stat, then its read) cost one trip to git, not two.
   */
  readonly #recentBlobs = new Map<string, GitObject>()
  #recentBlobBytes = 0
  /** The size of every blob read so far (up to {@link MAX_KNOWN_SIZES}): a stat without a read. */
  readonly #blobSizes = new Map<string, number>()
  #fetched = 0

  constructor(gitDir: string) {
    this.gitDir = gitDir
  }

  /** How many objects were asked of git so far (reads no cache answered). */
  get fetched(): number {
    return this.#fetched
  }

  /** Reads an object; undefined when it does not exist. */
  read(oid: string): Promise<GitObject | undefined> {
    const cached = this.#cache.get(oid) ?? this.#recentBlobs.get(oid)
    if (cached !== undefined) return Promise.resolve(cached)
    return new Promise((resolve, reject) => {
      const reader = this.#ensureReader()
      this.#fetched++
      this.#pending.push({
        oid,
        resolve: (object) => {
          if (object?.type === 'blob') this.#rememberBlob(oid, object)
          else if (object !== undefined) this.#cache.set(oid, object)
          resolve(object)
        },
        reject,
      })
      reader.stdin.write(`${oid}\n`)
    })
  }

  /** Reads an object that must exist. */
  async require(oid: string): Promise<GitObject> {
    const object = await this.read(oid)
    if (object === undefined)
      throw new EitriError('not_found', `The history is missing object ${oid}.`)
    return object
  }

  /** The size of a blob that must exist, read only when no earlier read told it. */
  async blobSize(oid: string): Promise<number> {
    return this.#blobSizes.get(oid) ?? (await this.require(oid)).content.byteLength
  }

  #rememberBlob(oid: string, blob: GitObject): void {
    if (this.#blobSizes.size >= MAX_KNOWN_SIZES) this.#blobSizes.clear()
    this.#blobSizes.set(oid, blob.content.byteLength)
    if (blob.content.byteLength > RECENT_BLOB_BYTES) return
    this.#recentBlobs.set(oid, blob)
    this.#recentBlobBytes += blob.content.byteLength
    for (const [old, kept] of this.#recentBlobs) {
      if (this.#recentBlobBytes <= RECENT_BLOB_BYTES && this.#recentBlobs.size <= RECENT_BLOBS)
        break
      this.#recentBlobs.delete(old)
      this.#recentBlobBytes -= kept.content.byteLength
    }
  }

  /**
   * Writes an object unless it exists; answers its id. The file is flushed before the rename,
   * so a log or reference that names it after this resolves never names a missing object.
   */
  write(type: 'blob' | 'tree' | 'commit', content: Uint8Array): string {
    const { oid, bytes } = encodeObject(type, content)
    const folder = path.join(this.gitDir, 'objects', oid.slice(0, 2))
    const file = path.join(folder, oid.slice(2))
    if (fs.existsSync(file)) return oid
    fs.mkdirSync(folder, { recursive: true })
    const temporary = path.join(folder, `.tmp-${randomBytes(6).toString('hex')}`)
    const descriptor = fs.openSync(temporary, 'wx', 0o444)
    try {
      fs.writeSync(descriptor, deflateSync(bytes, { level: 1 }))
      fs.fdatasyncSync(descriptor)
    } finally {
      fs.closeSync(descriptor)
    }
    fs.renameSync(temporary, file)
    return oid
  }

  /** Stops the reader. Idempotent. */
  close(): void {
    this.#reader?.stdin.end()
    this.#reader?.kill()
    this.#reader = undefined
  }

  #ensureReader(): ChildProcessWithoutNullStreams {
    if (this.#reader !== undefined) return this.#reader
    const reader = spawn('git', ['cat-file', '--batch'], {
      env: gitEnvironment({ gitDir: this.gitDir }),
      stdio: 'pipe',
    })
    reader.stdout.on('data', (chunk: Buffer) => {
      this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk])
      this.#drain()
    })
    const fail = (error: Error): void => {
      this.#reader = undefined
      for (const pending of this.#pending.splice(0)) pending.reject(error)
    }
    reader.once('error', (error) =>
      fail(
        new EitriError(
          'tool_failed',
          `git could not be started (${error.message}); install it: apt-get install git`,
        ),
      ),
    )
    reader.once('close', () =>
      fail(new EitriError('tool_failed', 'git cat-file stopped unexpectedly')),
    )
    reader.stdin.on('error', () => undefined)
    this.#reader = reader
    return reader
  }

  #drain(): void {
    for (;;) {
      const pending = this.#pending[0]
      if (pending === undefined) return
      const newline = this.#buffer.indexOf(0x0a)
      if (newline === -1) return
      const header = this.#buffer.toString('latin1', 0, newline)
      if (header.endsWith(' missing')) {
        this.#buffer = this.#buffer.subarray(newline + 1)
        this.#pending.shift()
        pending.resolve(undefined)
        continue
      }
      const [, type, sizeText] = header.split(' ')
      const size = Number(sizeText)
      if (this.#buffer.length < newline + 1 + size + 1) return
      const content = Buffer.from(this.#buffer.subarray(newline + 1, newline + 1 + size))
      this.#buffer = this.#buffer.subarray(newline + 1 + size + 1)
      this.#pending.shift()
      pending.resolve({ type: type as GitObject['type'], content })
    }
  }
}
