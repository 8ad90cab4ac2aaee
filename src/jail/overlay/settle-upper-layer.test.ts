import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { MAX_PATH_BYTES, settleUpperLayer } from './settle-upper-layer.ts'

describe('settleUpperLayer', () => {
  it('removes names that are not UTF-8 whole and clears setuid and setgid at any depth', () => {
    const upper = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-settle-test-'))
    try {
      const odd = Buffer.concat([Buffer.from(`${upper}/deep/`), Buffer.from([0xff])])
      fs.mkdirSync(path.join(upper, 'deep', 'er'), { recursive: true })
      fs.mkdirSync(odd)
      fs.writeFileSync(Buffer.concat([odd, Buffer.from('/hook')]), 'x', { mode: 0o6755 })
      fs.writeFileSync(path.join(upper, 'deep', 'er', 'id'), 'x')
      fs.chmodSync(path.join(upper, 'deep', 'er', 'id'), 0o6755)
      fs.symlinkSync('/usr/bin', path.join(upper, 'deep', 'link'))
      assert.deepEqual(
        settleUpperLayer(upper).map((away) => away.path),
        ['deep/\uFFFD'],
      )
      assert.deepEqual(fs.readdirSync(path.join(upper, 'deep')).sort(), ['er', 'link'])
      assert.equal(fs.statSync(path.join(upper, 'deep', 'er', 'id')).mode & 0o7777, 0o755)
      assert.equal(
        fs.readlinkSync(path.join(upper, 'deep', 'link')),
        '/usr/bin',
        'kept, not followed',
      )
    } finally {
      fs.rmSync(upper, { recursive: true, force: true })
    }
  })
  it('removes what lies deeper than the longest path kept, with all below it', () => {
    const upper = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-settle-test-'))
    try {
      const levels = 'd/'.repeat(MAX_PATH_BYTES / 2 + 50)
      // Made level by level, below the host's own path limit.
      let at = upper
      for (const name of levels.split('/').filter(Boolean)) {
        at = path.join(at, name)
        fs.mkdirSync(at)
        process.chdir(at)
        at = '.'
      }
      process.chdir(upper)
      const away = settleUpperLayer(upper)
      assert.equal(away.length, 1)
      assert.equal(Buffer.byteLength(away[0]?.path ?? ''), MAX_PATH_BYTES + 1)
      assert.match(away[0]?.reason ?? '', /longer than 2048 bytes/)
    } finally {
      process.chdir(os.tmpdir())
      fs.rmSync(upper, { recursive: true, force: true })
    }
  })
  it('never changes a host file through a link swapped in while it runs', async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-settle-test-'))
    const upper = path.join(base, 'upper')
    const hostFile = path.join(base, 'host-file')
    fs.mkdirSync(upper)
    fs.writeFileSync(hostFile, 'x', { mode: 0o600 })
    // A process that still reaches the layer: swaps a setuid file for a link to the host file
    // and back, each a rename, for as long as the pass runs.
    const swapper = spawn(
      'perl',
      [
        '-e',
        `chdir $ARGV[0] or die; while (1) { open(my $f, '>', 'f.tmp'); close $f; chmod 04777, 'f.tmp'; rename 'f.tmp', 'x'; symlink $ARGV[1], 'l.tmp'; rename 'l.tmp', 'x' }`,
        upper,
        hostFile,
      ],
      { stdio: 'ignore' },
    )
    try {
      while (!fs.existsSync(path.join(upper, 'x'))) await new Promise((r) => setTimeout(r, 10))
      let settled = 0
      for (let round = 0; round < 3000; round++) {
        try {
          settleUpperLayer(upper)
          settled++
        } catch {
          // The swapper renamed the entry away mid-pass: this round's check fails, harmlessly.
        }
        assert.equal(fs.statSync(hostFile).mode & 0o7777, 0o600, `round ${round}`)
      }
      assert.ok(settled > 0)
      // Positive control: once nothing swaps, the same pass clears the bits through the pin.
      swapper.kill('SIGKILL')
      await new Promise((resolve) => swapper.once('exit', resolve))
      fs.rmSync(path.join(upper, 'x'), { force: true })
      fs.writeFileSync(path.join(upper, 'x'), 'x')
      fs.chmodSync(path.join(upper, 'x'), 0o4755)
      settleUpperLayer(upper)
      assert.equal(fs.statSync(path.join(upper, 'x')).mode & 0o7777, 0o755)
    } finally {
      swapper.kill('SIGKILL')
      fs.rmSync(base, { recursive: true, force: true })
    }
  })
})
