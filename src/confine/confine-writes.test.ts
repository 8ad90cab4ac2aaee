import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { z } from 'zod'
import { confine } from './confine.ts'
import type { ConfinedCall } from './confined-function.ts'
import { sha256 } from './executors/executor-contract.ts'
import { call, folder, identity, inline, sandboxOf } from './test-confine.ts'

describe('confine', () => {
  describe('writes', () => {
    const writeInScratch = (_input: unknown, c: ConfinedCall) =>
      fs.writeFile(path.join(c.workdir, 'out.txt'), 'result').then(() => 'wrote')

    it('refuses a write in the scratch folder in read-only mode', async () => {
      const result = await call(confine(writeInScratch, { ...identity, executor: inline }))
      assert.equal(result.type === 'error' && result.code, 'sandbox_violation')
      assert.match(
        result.content,
        /^VIOLATION: tool 'probe' wrote outside the permitted paths: out\.txt/,
      )
      assert.deepEqual(result.metadata['paths'], ['out.txt'])
      assert.deepEqual(sandboxOf(result).violations, ['out.txt'])
    })

    it('allows and hashes a write in the scratch folder in tempdir mode', async () => {
      const result = await call(
        confine(writeInScratch, { ...identity, mode: 'tempdir', executor: inline }),
      )
      assert.equal(result.type, 'success')
      assert.equal(result.content, 'wrote')
      assert.deepEqual(sandboxOf(result).outputHashes, { 'out.txt': sha256('result') })
      assert.deepEqual(sandboxOf(result).violations, [])
    })

    it('refuses a write outside the scratch folder even in tempdir mode', async (t) => {
      const outside = path.join(await folder(t), 'escaped.txt')
      const tool = confine(
        async (_input, c: ConfinedCall) => {
          await fs.writeFile(outside, 'x')
          c.reportWrite(outside)
        },
        { ...identity, mode: 'tempdir', executor: inline },
      )
      const result = await call(tool)
      assert.equal(result.type === 'error' && result.code, 'sandbox_violation')
      assert.deepEqual(result.metadata['paths'], [outside])
      assert.match(result.content, new RegExp(`permitted paths: ${outside}\\.`))
    })

    it('allows a write under allowPaths, in any mode, and hashes it', async (t) => {
      const allowed = await folder(t)
      const target = path.join(allowed, 'new', 'deep.txt')
      const tool = confine(
        async (_input, c: ConfinedCall) => {
          await fs.mkdir(path.dirname(target), { recursive: true })
          await fs.writeFile(target, 'kept')
          c.reportWrite(target)
          return 'done'
        },
        { ...identity, allowPaths: [allowed], executor: inline },
      )
      const result = await call(tool)
      assert.equal(result.type, 'success', result.content)
      assert.deepEqual(sandboxOf(result).outputHashes, { [target]: sha256('kept') })
    })

    it('compares real paths: a symlinked ancestor into an allowed root is inside, one out of it is not', async (t) => {
      const base = await folder(t)
      const allowed = path.join(base, 'allowed')
      const outside = path.join(base, 'outside')
      await fs.mkdir(allowed)
      await fs.mkdir(outside)
      await fs.symlink(allowed, path.join(base, 'link-in'))
      await fs.symlink(outside, path.join(allowed, 'link-out'))
      const reporting = (reported: string) =>
        confine((_input, c: ConfinedCall) => c.reportWrite(reported), {
          ...identity,
          allowPaths: [allowed],
          executor: inline,
        })
      const viaLinkIn = await call(reporting(path.join(base, 'link-in', 'not-yet', 'file.txt')))
      assert.equal(viaLinkIn.type, 'success', viaLinkIn.content)
      const viaLinkOut = await call(reporting(path.join(allowed, 'link-out', 'file.txt')))
      assert.equal(viaLinkOut.type === 'error' && viaLinkOut.code, 'sandbox_violation')
      const prefixOnly = await call(reporting(`${allowed}-sibling/file.txt`))
      assert.equal(prefixOnly.type === 'error' && prefixOnly.code, 'sandbox_violation')
      const rootItself = await call(reporting(allowed))
      assert.equal(rootItself.type, 'success')
    })

    it('allows a root given through a symlink', async (t) => {
      const base = await folder(t)
      await fs.mkdir(path.join(base, 'real'))
      await fs.symlink(path.join(base, 'real'), path.join(base, 'alias'))
      const tool = confine(
        (_input, c: ConfinedCall) => c.reportWrite(path.join(base, 'real', 'x.txt')),
        { ...identity, allowPaths: [path.join(base, 'alias')], executor: inline },
      )
      assert.equal((await call(tool)).type, 'success')
    })
  })

  describe('input hashes', () => {
    it('hashes strings naming existing regular files, nested ones too, and nothing else', async (t) => {
      const base = await folder(t)
      const file = path.join(base, 'input.txt')
      const nested = path.join(base, 'nested.txt')
      await fs.writeFile(file, 'input data')
      await fs.writeFile(nested, 'nested data')
      const tool = confine(() => 'ok', {
        name: 'hashing',
        description: 'Takes paths.',
        parameters: z.object({
          path: z.string(),
          folder: z.string(),
          missing: z.string(),
          text: z.string(),
          more: z.object({ list: z.array(z.string()) }),
        }),
        executor: inline,
      })
      const result = await call(tool, {
        path: file,
        folder: base,
        missing: path.join(base, 'missing.txt'),
        text: 'just words',
        more: { list: [nested] },
      })
      assert.deepEqual(sandboxOf(result).inputHashes, {
        [file]: sha256('input data'),
        [nested]: sha256('nested data'),
      })
    })
  })
})
