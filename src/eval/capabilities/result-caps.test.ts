import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { createWorkspaceView } from '../../access/confined-workspace.ts'
import type { ToolContext } from '../../tool/tool-context.ts'
import { DirectoryTree } from '../../workspace/directory-tree.ts'
import { EvalPool } from '../eval-pool.ts'
import { MAX_RESULT_BYTES } from '../eval-limits.ts'
import { IsolateEngine } from '../host/isolate-engine.ts'
import { defaultCatalog } from './default-capabilities.ts'
import { evalError, evalValue, evalWorkshop } from './test-eval-workshop.ts'

const GIB = 1024 ** 3

describe('capability results are capped', () => {
  it('fs.readFile refuses a file over the cap by its size, before reading it, however many at once', async () => {
    await using fixture = await evalWorkshop({ files: { 'small.txt': 'small\n' } })
    // Sparse: a gibibyte that costs no disk.
    const big = path.join(fixture.scratch.workspace, 'big.bin')
    fs.writeFileSync(big, '')
    fs.truncateSync(big, GIB)
    const before = process.memoryUsage().rss
    const content = evalError(
      await fixture.run(
        "await Promise.all(Array.from({ length: 8 }, () => fs.readFile('big.bin', { encoding: 'base64' })))",
      ),
      'eval_error',
    )
    assert.match(
      content,
      new RegExp(
        `\\[file_too_large\\]: big.bin is ${GIB} bytes, over the ${MAX_RESULT_BYTES} bytes one fs.readFile answers. Read it in parts with fs.readRange`,
      ),
    )
    assert.ok(process.memoryUsage().rss - before < 256 * 1024 * 1024, 'nothing was read whole')
    // The control: a file under the cap reads whole.
    assert.equal(evalValue(await fixture.run("await fs.readFile('small.txt')")), 'small\n')
  })

  it('fs.readRange reads a large file in parts that never cut a character, and says where to go on', async () => {
    const text = `${'é'.repeat(10)}a€😀\n`.repeat(3)
    await using fixture = await evalWorkshop({ files: { 'text.txt': text } })
    const joined = await fixture.run(`
      let parts = [], offset = 0, part
      do {
        part = await fs.readRange('text.txt', { offset, length: 7 })
        parts.push(part.content)
        offset = part.nextOffset
      } while (!part.done)
      JSON.stringify({ text: parts.join(''), count: parts.length, size: part.size })`)
    const answer = JSON.parse(evalValue(joined)) as { text: string; count: number; size: number }
    assert.equal(answer.text, text)
    assert.equal(answer.size, Buffer.byteLength(text))
    assert.ok(answer.count > 10)
    const base64 = await fixture.run(
      "(await fs.readRange('text.txt', { offset: 1, length: 5, encoding: 'base64' })).content",
    )
    assert.equal(evalValue(base64), Buffer.from(text).subarray(1, 6).toString('base64'))
    assert.match(
      evalError(await fixture.run("await fs.readRange('text.txt', { offset: 1 })"), 'eval_error'),
      /\[invalid_input\]: Offset 1 of text.txt is inside a UTF-8 character/,
    )
  })

  it('refuses a part whose JSON would be too large before decoding it (control characters take six)', async () => {
    await using fixture = await evalWorkshop()
    const zeros = path.join(fixture.scratch.workspace, 'zeros.bin')
    fs.writeFileSync(zeros, '')
    fs.truncateSync(zeros, 8 * 1024 * 1024)
    assert.match(
      evalError(await fixture.run("(await fs.readRange('zeros.bin')).bytes"), 'eval_error'),
      /\[limit_exceeded\]: zeros.bin: these 8388608 bytes would be 50331650 characters as JSON/,
    )
    assert.equal(
      evalValue(
        await fixture.run("(await fs.readRange('zeros.bin', { encoding: 'base64' })).bytes"),
      ),
      '8388608',
    )
  })

  it('drive reads are refused over the cap by the size the drive recorded', async () => {
    await using fixture = await evalWorkshop()
    const over = MAX_RESULT_BYTES + 1
    const written = await fixture.run(
      `const { id } = await drive.write('big.txt', 'x'.repeat(${over})); id`,
    )
    const id = evalValue(written)
    for (const read of ["drive.read('big.txt')", `drive.get('${id}')`]) {
      assert.match(
        evalError(await fixture.run(`(await ${read}).length`), 'eval_error'),
        new RegExp(`\\[file_too_large\\]: .* is ${over} bytes, over the ${MAX_RESULT_BYTES} bytes`),
        read,
      )
    }
    await fixture.run("await drive.write('small.txt', 'small')")
    assert.equal(evalValue(await fixture.run("await drive.read('small.txt')")), 'small')
  })
})

describe('capability calls share a byte budget', () => {
  const FILE_BYTES = 300 * 1024
  const open = (folder: string, session?: number) =>
    new EvalPool({
      engine: () => new IsolateEngine(),
      catalog: defaultCatalog(),
      settings: {
        http: { allow: [], maxResponseBytes: 1000, timeoutMs: 1000, testOnlyAllowLoopback: false },
        env: [],
        secrets: {},
        keyVariables: [],
        readVariable: () => undefined,
        toolCallBudget: 10,
      },
      ...(session === undefined ? {} : { bytesInFlight: { session } }),
    })
  const read = async (pool: EvalPool, folder: string): Promise<string | undefined> => {
    const ctx: ToolContext = {
      signal: new AbortController().signal,
      workspace: createWorkspaceView({ tree: new DirectoryTree(folder) }),
    }
    const { outcome } = await pool.owner().evaluate(
      {
        code: '(await Promise.all(Array.from({ length: 8 }, (_, i) => fs.readFile(`f${i}.txt`)))).map((text) => text.length).join()',
      },
      ctx,
    )
    return outcome.type === 'value' ? outcome.value : outcome.message
  }

  it('holds no more than the session budget at once: reads wait their turn and all finish', async (t) => {
    const folder = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'eitri-budget-'))
    t.after(() => fs.rmSync(folder, { recursive: true, force: true }))
    for (let i = 0; i < 8; i++)
      fs.writeFileSync(path.join(folder, `f${i}.txt`), 'a'.repeat(FILE_BYTES))
    const all = Array.from({ length: 8 }, () => String(FILE_BYTES)).join()

    await using bounded = open(folder, 1024 * 1024)
    assert.equal(await read(bounded, folder), all)
    assert.ok(bounded.bytesInFlight.peak <= 1024 * 1024, `peak ${bounded.bytesInFlight.peak}`)
    assert.ok(bounded.bytesInFlight.peak >= 2 * FILE_BYTES, 'two fit at once')
    assert.equal(bounded.bytesInFlight.used, 0, 'everything was given back')

    // The control: with the default budget the same eval holds all eight at once.
    await using roomy = open(folder)
    assert.equal(await read(roomy, folder), all)
    assert.ok(roomy.bytesInFlight.peak >= 8 * FILE_BYTES, `peak ${roomy.bytesInFlight.peak}`)
  })
})
