/**
 * @module workspace/git/object-checks
 * What git says about objects that came from elsewhere: which ids an object store lacks, and
 * whether a pack and its index are what they claim. git runs on a scratch repository of
 * eitri's own (its configuration, no hooks), reading the user's object store only through
 * `GIT_OBJECT_DIRECTORY`: the user's configuration is never read, and nothing is written there.
 */
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { OBJECT_ID_HEX_LENGTH, type ObjectFormat } from './object-format.ts'
import { runGit } from './run-git.ts'

/** A lookup of a few ids takes milliseconds; a stuck one is not waited for. */
const LOOKUP_TIMEOUT_MS = 30_000
/**
 * Verifying a pack inflates every object in it: a 64 MiB pack of highly compressed data could
 * take long, so the check has a deadline (and a pack that misses it is refused).
 */
const VERIFY_TIMEOUT_MS = 120_000

/** The outcome of a pack check. */
export type PackCheck = { readonly ok: true } | { readonly ok: false; readonly reason: string }

/**
 * The ids of `ids` that the object store at `objectsFolder` (a host path; loose objects, packs
 * and alternates, as git reads them) does not hold. Without a folder, every id is missing.
 */
export async function missingObjects(
  objectsFolder: string | undefined,
  ids: readonly string[],
  format: ObjectFormat,
): Promise<Set<string>> {
  const wanted = [...new Set(ids)].filter((id) => isObjectId(id, format))
  const missing = new Set(ids.filter((id) => !isObjectId(id, format)))
  if (wanted.length === 0) return missing
  if (objectsFolder === undefined) return new Set([...missing, ...wanted])
  return withScratchRepository(format, async (gitDir) => {
    const output = await runGit(gitDir, ['cat-file', '--batch-check=%(objectname)'], {
      input: `${wanted.join('\n')}\n`,
      env: { GIT_OBJECT_DIRECTORY: objectsFolder },
      check: false,
      timeoutMs: LOOKUP_TIMEOUT_MS,
    })
    // Fail closed: an answer git did not give in full counts every id as missing.
    if (output.status !== 0) return new Set([...missing, ...wanted])
    const found = new Set(output.stdout.toString('latin1').split('\n'))
    for (const id of wanted) if (!found.has(id)) missing.add(id)
    return missing
  })
}

/**
 * Whether `pack` is a whole, uncorrupted pack and `index` is byte for byte the index git makes
 * of it (`git index-pack --verify` recomputes every object id, so an index that maps an id to
 * other content fails). With `objectsFolder`, git also compares objects the store already
 * holds with the pack's copies (a hash collision fails). A thin pack (deltas against objects
 * outside it) fails: git never leaves one in a repository.
 */
export async function verifyPack(
  pack: Uint8Array,
  index: Uint8Array,
  format: ObjectFormat,
  objectsFolder?: string,
): Promise<PackCheck> {
  return withScratchRepository(format, async (target) => {
    const packPath = path.join(target.gitDir, 'check.pack')
    await fs.writeFile(packPath, pack, { mode: 0o600 })
    await fs.writeFile(path.join(target.gitDir, 'check.idx'), index, { mode: 0o600 })
    const output = await runGit(
      target,
      ['index-pack', '--verify', `--object-format=${format}`, packPath],
      {
        env: objectsFolder === undefined ? {} : { GIT_OBJECT_DIRECTORY: objectsFolder },
        check: false,
        timeoutMs: VERIFY_TIMEOUT_MS,
      },
    )
    if (output.status === 0) return { ok: true }
    const said = output.stderr.trim().split('\n').at(-1)?.slice(0, 300)
    return {
      ok: false,
      reason:
        output.status === -1
          ? `git could not verify it within ${VERIFY_TIMEOUT_MS / 1000} s`
          : `git index-pack --verify refused it${said === undefined || said === '' ? '' : ` (${said})`}`,
    }
  })
}

function isObjectId(id: string, format: ObjectFormat): boolean {
  return id.length === OBJECT_ID_HEX_LENGTH[format] && /^[0-9a-f]+$/.test(id)
}

/**
 * Runs `work` with a private, empty repository of `format` (0700, in the system's temporary
 * folder, removed afterwards): git needs a repository to look objects up, and this one's
 * configuration is eitri's.
 */
export async function withScratchRepository<T>(
  format: ObjectFormat,
  work: (target: { gitDir: string }) => Promise<T>,
): Promise<T> {
  const gitDir = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-object-check-'))
  try {
    await fs.mkdir(path.join(gitDir, 'objects'))
    await fs.mkdir(path.join(gitDir, 'refs'))
    await fs.writeFile(path.join(gitDir, 'HEAD'), 'ref: refs/heads/main\n')
    await fs.writeFile(
      path.join(gitDir, 'config'),
      format === 'sha1'
        ? '[core]\n\trepositoryformatversion = 0\n\tbare = true\n'
        : '[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectformat = sha256\n',
    )
    return await work({ gitDir })
  } finally {
    await fs.rm(gitDir, { recursive: true, force: true })
  }
}
