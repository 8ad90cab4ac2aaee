/**
 * A throwaway PostgreSQL cluster for one test process: `initdb` into a fresh temporary folder,
 * `pg_ctl start` on 127.0.0.1 with a free port and its socket inside that folder, as the
 * `postgres` user when we are root. Tests never use a server they did not start. Without
 * PostgreSQL's programs this fails (never skips), saying how to install them.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'

const run = promisify(execFile)

/** A running cluster. */
export interface PostgresCluster extends AsyncDisposable {
  readonly port: number
  /** Creates an empty database and answers its URL. */
  createDatabase(name?: string): Promise<string>
  /** The URL of an existing database. */
  url(database: string): string
  /** Stops the server and removes its folder. Idempotent. */
  stop(): Promise<void>
}

/** The folder of PostgreSQL's server programs (the newest installed). */
export function postgresBinaries(): string {
  const root = '/usr/lib/postgresql'
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((name) => fs.existsSync(path.join(root, name, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : []
  if (versions[0] === undefined) {
    throw new Error(
      'PostgreSQL is not installed: these tests start their own throwaway server. Install it with `apt-get install postgresql` (Debian/Ubuntu), then run the tests again.',
    )
  }
  return path.join(root, versions[0], 'bin')
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}

/** The uid and gid of `postgres` when we are root (initdb refuses to run as root). */
function serverIdentity(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'))
  if (line === undefined) {
    throw new Error(
      'Running as root needs the `postgres` user: apt-get install postgresql creates it.',
    )
  }
  const [, , uid, gid] = line.split(':')
  return { uid: Number(uid), gid: Number(gid) }
}

/**
 * Starts a cluster. `durable: false` (the default) turns off fsync for speed: the tests kill
 * clients, never the server. Benchmarks pass `durable: true`.
 */
export async function startPostgresCluster(
  options: { readonly durable?: boolean } = {},
): Promise<PostgresCluster> {
  const bin = postgresBinaries()
  const identity = serverIdentity()
  const folder = await fsp.mkdtemp(path.join(os.tmpdir(), 'eitri-pg-'))
  const data = path.join(folder, 'data')
  if (identity !== undefined) await fsp.chown(folder, identity.uid, identity.gid)
  const as = {
    ...(identity ?? {}),
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
  }
  await run(
    path.join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync'],
    as,
  )
  const port = await freePort()
  const settings = [
    `-p ${port}`,
    `-k ${folder}`,
    '-c listen_addresses=127.0.0.1',
    '-c max_connections=200',
    ...(options.durable === true
      ? []
      : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off']),
  ]
  await run(
    path.join(bin, 'pg_ctl'),
    [
      'start',
      '-D',
      data,
      '-w',
      '-t',
      '60',
      '-l',
      path.join(folder, 'server.log'),
      '-o',
      settings.join(' '),
    ],
    as,
  )
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`
  let count = 0
  let stopped = false
  const stop = async (): Promise<void> => {
    if (stopped) return
    stopped = true
    await run(path.join(bin, 'pg_ctl'), ['stop', '-D', data, '-m', 'immediate', '-w'], as).catch(
      () => undefined,
    )
    await fsp.rm(folder, { recursive: true, force: true })
  }
  return {
    port,
    url,
    async createDatabase(name = `eitri_${process.pid}_${++count}`) {
      const client = new pg.Client({ connectionString: url('postgres') })
      await client.connect()
      try {
        await client.query(`CREATE DATABASE "${name}"`)
      } finally {
        await client.end()
      }
      return url(name)
    },
    stop,
    [Symbol.asyncDispose]: stop,
  }
}
