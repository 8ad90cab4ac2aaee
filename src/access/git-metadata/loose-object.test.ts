import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { deflateSync } from 'node:zlib'
import { looseObjectProblem } from './loose-object.ts'

/** The id git gives `content` as a blob (git is the oracle), in a repository of `format`. */
function blobId(content: string, format: 'sha1' | 'sha256' = 'sha1'): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-blob-id-'))
  try {
    spawnSync('git', ['init', '-q', `--object-format=${format}`, folder])
    const run = spawnSync('git', ['hash-object', '--stdin'], {
      cwd: folder,
      input: content,
      encoding: 'utf8',
    })
    return run.stdout.trim()
  } finally {
    fs.rmSync(folder, { recursive: true, force: true })
  }
}

const loose = (raw: string): Buffer => deflateSync(Buffer.from(raw, 'latin1'))
const budget = () => ({ remaining: 1024 * 1024 })

describe('loose objects are what their name claims', () => {
  it('accepts a blob whose content hashes to its name, in both formats', async () => {
    assert.equal(
      await looseObjectProblem(loose('blob 2\0a\n'), blobId('a\n'), 'sha1', budget()),
      undefined,
    )
    assert.equal(
      await looseObjectProblem(loose('blob 2\0a\n'), blobId('a\n', 'sha256'), 'sha256', budget()),
      undefined,
    )
  })

  const refused: [string, Buffer, RegExp][] = [
    ['other content under the name', loose('blob 7\0forged\n'), /its content is object/],
    ['not compressed', Buffer.from('blob 2\0a\n'), /not zlib/],
    ['no header', loose('just text'), /object header/],
    ['a size with leading zeros', loose('blob 02\0a\n'), /object header/],
    ['more than the header says', loose('blob 1\0a\n'), /more than its header/],
    ['less than the header says', loose('blob 9\0a\n'), /less than its header/],
    [
      'bytes after the compressed data',
      Buffer.concat([loose('blob 2\0a\n'), Buffer.from('x')]),
      /bytes after/,
    ],
  ]
  for (const [what, bytes, reason] of refused) {
    it(`refuses ${what}`, async () => {
      assert.match((await looseObjectProblem(bytes, blobId('a\n'), 'sha1', budget())) ?? '', reason)
    })
  }

  it('stops at its budget: a small file cannot make it inflate gigabytes', async () => {
    const bomb = deflateSync(
      Buffer.concat([Buffer.from('blob 104857600\0'), Buffer.alloc(100 * 1024 * 1024)]),
    )
    assert.ok(bomb.byteLength < 200 * 1024)
    const started = performance.now()
    assert.match(
      (await looseObjectProblem(bomb, blobId('a\n'), 'sha1', budget())) ?? '',
      /too large to check/,
    )
    assert.ok(performance.now() - started < 1000)
  })
})
