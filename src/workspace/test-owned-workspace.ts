/**
 * @module workspace/test-owned-workspace
 * The layout the root-caller tests of decision 0060 share: a workspace some user owns, holding
 * another user's closed file and closed folder.
 */
import fs from 'node:fs'
import path from 'node:path'

/** The workspace's owner: a user with no account, as a user's own folder would have. */
export const OWNER = 4201
/** Another user, whose files the owner may not read. */
export const OTHER = 4202

/** Files {@link closeToOwner} expects in the workspace, with their contents. */
export const OWNED_LAYOUT: Readonly<Record<string, string>> = {
  'mine.txt': 'mine\n',
  'secret.txt': 'SECRET-FILE\n',
  'private/inner.txt': 'SECRET-FOLDER\n',
  'open/plain.txt': 'plain\n',
}

/**
 * Makes `workspace` (holding {@link OWNED_LAYOUT}) {@link OWNER}'s, with {@link OTHER}'s
 * `secret.txt` (0600) and folder `private/` (0700) holding a readable-looking `inner.txt` (0644).
 */
export function closeToOwner(workspace: string): void {
  const at = (name: string) => path.join(workspace, name)
  for (const name of ['', 'mine.txt', 'open', 'open/plain.txt'])
    fs.chownSync(at(name), OWNER, OWNER)
  fs.chmodSync(at(''), 0o755)
  fs.chownSync(at('secret.txt'), OTHER, OTHER)
  fs.chmodSync(at('secret.txt'), 0o600)
  fs.chownSync(at('private'), OTHER, OTHER)
  fs.chmodSync(at('private'), 0o700)
  fs.chownSync(at('private/inner.txt'), OTHER, OTHER)
  fs.chmodSync(at('private/inner.txt'), 0o644)
}
