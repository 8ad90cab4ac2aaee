import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { ownedPrefix, ownerTag, processStartTime } from '../util/owned-folders.ts'
import { sweepAbandonedFolders } from './temporary-folders.ts'

const MODULE = fileURLToPath(new URL('./temporary-folders.ts', import.meta.url))

function base(t: { after(fn: () => void): void }): string {
  const folder = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sweep-test-')))
  t.after(() => fs.rmSync(folder, { recursive: true, force: true }))
  return folder
}

/** The tag of a process that ran and has ended. */
function deadTag(): string {
  const child = spawnSync('/bin/sh', ['-c', 'echo $$; cat /proc/$$/stat'], { encoding: 'utf8' })
  const [pid, stat = ''] = child.stdout.split('\n')
  const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  assert.equal(processStartTime(Number(pid)), undefined, 'the process has ended')
  return `${pid}.${start}`
}

function makeFolder(root: string, name: string, files: Record<string, string> = {}): string {
  const folder = path.join(root, name)
  fs.mkdirSync(folder)
  for (const [file, content] of Object.entries(files))
    fs.writeFileSync(path.join(folder, file), content)
  return folder
}

describe('owned temporary folders', () => {
  it('are named after this process: pid and start time', () => {
    const tag = ownerTag()
    assert.equal(tag, `${process.pid}.${processStartTime('self')}`)
    assert.equal(ownedPrefix('jail', '/x'), `/x/eitri-jail-${tag}-`)
    const folder = fs.mkdtempSync(ownedPrefix('drive'))
    try {
      assert.match(
        path.basename(folder),
        new RegExp(`^eitri-drive-${tag.replace('.', '\\.')}-\\w{6}$`),
      )
    } finally {
      fs.rmdirSync(folder)
    }
  })

  it('a sweep removes the folders of ended owners and keeps the rest', async (t) => {
    const root = base(t)
    const dead = deadTag()
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' })
    t.after(() => sleeper.kill())
    const live = `${sleeper.pid}.${processStartTime(sleeper.pid ?? 0)}`
    const reused = `${sleeper.pid}.1` // its pid, but not the process that started then
    const outside = makeFolder(root, 'outside', { 'keep.txt': 'kept' })
    const gone = [
      makeFolder(root, `eitri-jail-${dead}-abc123`, { 'empty-file': '' }),
      makeFolder(root, `eitri-mirror-${dead}-Xy9Zq1`, { 'a.txt': 'a' }),
      makeFolder(root, `eitri-drive-${reused}-qwerty`),
      makeFolder(root, `eitri-confine-tmp-${dead}-000000`),
    ]
    // A link inside a swept folder is removed, never followed.
    fs.symlinkSync(outside, path.join(gone[1] ?? '', 'link'))
    const kept = [
      makeFolder(root, `eitri-jail-${live}-abc123`),
      makeFolder(root, `eitri-mirror-${ownerTag()}-abc123`),
      makeFolder(root, `eitri-jail-abc123`), // no owner recorded
      makeFolder(root, `eitri-test-${dead}-abc123`), // not one of eitri's kinds
      makeFolder(root, `other-jail-${dead}-abc123`),
    ]
    // A link or a file with an owned name is not a folder of eitri's: it stays, and so does
    // what a link points to.
    fs.symlinkSync(outside, path.join(root, `eitri-jail-${dead}-link00`))
    fs.writeFileSync(path.join(root, `eitri-drive-${dead}-file00`), 'x')

    const sweep = sweepAbandonedFolders(root)
    await sweep.removed
    assert.deepEqual([...sweep.swept].sort(), [...gone].sort())
    for (const folder of gone) assert.equal(fs.existsSync(folder), false, folder)
    for (const folder of kept) assert.ok(fs.existsSync(folder), folder)
    assert.ok(fs.lstatSync(path.join(root, `eitri-jail-${dead}-link00`)).isSymbolicLink())
    assert.ok(fs.existsSync(path.join(root, `eitri-drive-${dead}-file00`)))
    assert.equal(fs.readFileSync(path.join(outside, 'keep.txt'), 'utf8'), 'kept')
    assert.deepEqual(
      fs.readdirSync(root).filter((name) => name.startsWith('eitri-swept-')),
      [],
      'nothing left half removed',
    )
  })

  it('two eitris sweeping at once take each folder once and remove them all', async (t) => {
    const root = base(t)
    const dead = deadTag()
    const folders = Array.from({ length: 40 }, (_, index) =>
      makeFolder(root, `eitri-mirror-${dead}-${String(index).padStart(6, '0')}`, { f: 'x' }),
    )
    const script = `import { sweepAbandonedFolders } from ${JSON.stringify(MODULE)}
const keep = setInterval(() => {}, 1000)
const sweep = sweepAbandonedFolders(${JSON.stringify(root)}); await sweep.removed; clearInterval(keep)
process.stdout.write(JSON.stringify(sweep.swept))`
    const sweeper = () =>
      new Promise<string[]>((resolve, reject) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
          stdio: ['ignore', 'pipe', 'inherit'],
        })
        let out = ''
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
        child.once('error', reject)
        child.once('close', () => resolve(JSON.parse(out || '[]') as string[]))
      })
    const [first, second] = await Promise.all([sweeper(), sweeper()])
    const all = [...(first ?? []), ...(second ?? [])].sort()
    assert.deepEqual(all, [...folders].sort(), 'each folder taken by exactly one sweeper')
    assert.deepEqual(fs.readdirSync(root), [])
  })
})
