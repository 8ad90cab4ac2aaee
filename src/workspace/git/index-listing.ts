/**
 * @module workspace/git/index-listing
 * The entries of an index as git itself reads them (`git ls-files --stage`), for checking a
 * reading of the bytes against git's. git runs on a scratch repository of eitri's own (its
 * configuration, no hooks, no fsmonitor), with `GIT_INDEX_FILE` naming a private copy of the
 * index: nothing of the user's repository is read, and no program runs.
 */
import fs from 'node:fs/promises'
import path from 'node:path'
import type { IndexEntry } from './index-file.ts'
import { withScratchRepository } from './object-checks.ts'
import type { ObjectFormat } from './object-format.ts'
import { runGit } from './run-git.ts'

/** Listing an index takes milliseconds; a stuck one is not waited for. */
const LIST_TIMEOUT_MS = 30_000
/** `<mode> <id> <stage>\t` and a path: a path is rarely longer than a few hundred bytes. */
const MAX_BYTES_PER_ENTRY = 512

/**
 * The entries git reads in `index` (in order), or why git could not read it. At most
 * `maxEntries` are listed.
 */
export async function listIndex(
  index: Uint8Array,
  format: ObjectFormat,
  maxEntries: number,
): Promise<{ ok: true; entries: IndexEntry[] } | { ok: false; reason: string }> {
  return withScratchRepository(format, async ({ gitDir }) => {
    const file = path.join(gitDir, 'judged-index')
    await fs.writeFile(file, index, { mode: 0o600 })
    const output = await runGit({ gitDir }, ['ls-files', '--stage', '-z'], {
      env: { GIT_INDEX_FILE: file },
      check: false,
      timeoutMs: LIST_TIMEOUT_MS,
      maxStdoutBytes: maxEntries * MAX_BYTES_PER_ENTRY,
    })
    if (output.overflowed === true) {
      return { ok: false, reason: `git lists more than the ${maxEntries} entries judged at once` }
    }
    if (output.status !== 0) {
      const said = output.stderr.trim().split('\n').at(-1)?.slice(0, 200) ?? ''
      return {
        ok: false,
        reason:
          output.status === -1
            ? `git could not read it within ${LIST_TIMEOUT_MS / 1000} s`
            : `git could not read it${said === '' ? '' : ` (${said})`}`,
      }
    }
    const records = output.stdout.toString('latin1').split('\0')
    if (records.at(-1) === '') records.pop()
    const entries: IndexEntry[] = []
    for (const record of records) {
      const match = /^([0-7]{6,11}) ([0-9a-f]+) ([0-3])\t([^]*)$/.exec(record)
      if (match === null) return { ok: false, reason: 'git listed what is not an index entry' }
      const [, mode = '', id = '', stage = '', name = ''] = match
      entries.push({ path: name, stage: Number(stage), mode, id })
    }
    return { ok: true, entries }
  })
}
