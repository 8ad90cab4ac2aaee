/**
 * @module mcp/http-token
 * The bearer token of `eitri serve --http`: made once per workspace, kept in its state folder
 * (mode 0600), so a client's saved settings keep working across restarts. On loopback too: any
 * local user (or a program running as one) can reach a port on 127.0.0.1.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

/** The token file in a workspace's state folder. */
export const HTTP_TOKEN_FILE = 'http-token'

/** 32 random bytes, base64url: 43 characters a header or a shell takes as they are. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/

/** What `httpToken` found. */
export interface StoredToken {
  readonly token: string
  readonly file: string
  /** True when this call made it (first use, or the old one was unreadable or exposed). */
  readonly created: boolean
}

/**
 * The workspace's token, made on first use. A file that others could read, that is not a
 * plain file of this user, or that holds no token is replaced: a token others may have read
 * is no secret.
 */
export function httpToken(stateDir: string): StoredToken {
  const file = path.join(stateDir, HTTP_TOKEN_FILE)
  const existing = readToken(file)
  if (existing !== undefined) return { token: existing, file, created: false }
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 })
  const token = randomBytes(32).toString('base64url')
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`
  fs.writeFileSync(temporary, `${token}\n`, { mode: 0o600, flag: 'wx' })
  try {
    // A link is exclusive: when two servers start at once, the first token stays and both use it.
    if (!linked(temporary, file)) {
      const winner = readToken(file)
      if (winner !== undefined) return { token: winner, file, created: false }
      // What is there is no usable token (exposed, foreign, damaged): replace it.
      fs.rmSync(file, { force: true })
      fs.linkSync(temporary, file)
    }
  } finally {
    fs.rmSync(temporary, { force: true })
  }
  return { token, file, created: true }
}

/** Links `temporary` as `file`; false when `file` exists already. */
function linked(temporary: string, file: string): boolean {
  try {
    fs.linkSync(temporary, file)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
}

function readToken(file: string): string | undefined {
  let descriptor: number
  try {
    descriptor = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
  } catch {
    return undefined
  }
  try {
    const stat = fs.fstatSync(descriptor)
    const mine = process.getuid === undefined || stat.uid === process.getuid()
    if (!stat.isFile() || !mine || (stat.mode & 0o077) !== 0 || stat.size > 1024) return undefined
    const token = fs.readFileSync(descriptor, 'utf8').trim()
    return TOKEN.test(token) ? token : undefined
  } finally {
    fs.closeSync(descriptor)
  }
}
