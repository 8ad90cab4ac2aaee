import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { EitriError } from '../errors/eitri-error.ts'
import { JsonLinesApprovalLog, type ApprovalRecord } from './approval-log.ts'

const decision = (summary: string): ApprovalRecord => ({
  time: new Date().toISOString(),
  tool: 'write_file',
  inputDigest: 'sha256:00',
  summary,
  decision: 'approved',
  by: 'tester',
  access: 'workspace-write',
  dangerous: false,
})

describe('the approval log', () => {
  it('drops a torn last line, seals it at the next record, and names a bad line in the middle', async (t) => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-approval-log-'))
    t.after(() => fs.rmSync(folder, { recursive: true, force: true }))
    const log = new JsonLinesApprovalLog(folder)
    await log.record(decision('first'))
    fs.appendFileSync(log.file, '{"time":"2026-01-01T00:00:00.000Z","tool":"wr')
    assert.deepEqual(
      (await log.list()).map((record) => record.summary),
      ['first'],
    )
    await log.record(decision('second'))
    assert.deepEqual(
      (await log.list()).map((record) => record.summary),
      ['first', 'second'],
    )
    // The control: a line that is no record, with records after it and no seal, is refused.
    fs.appendFileSync(log.file, '{"decision":"maybe"}\n')
    await log.record(decision('third'))
    const error = await log.list().then(
      () => undefined,
      (caught: unknown) => caught,
    )
    assert.ok(EitriError.isInstance(error))
    assert.equal(error.code, 'state_corrupt')
    assert.match(error.message, new RegExp(`^The approval log ${log.file} line 5 is not a valid`))
  })

  it('keeps a huge summary to a readable line', async (t) => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-approval-log-'))
    t.after(() => fs.rmSync(folder, { recursive: true, force: true }))
    const log = new JsonLinesApprovalLog(folder)
    await log.record(decision(`echo ${'x'.repeat(2_000_000)}`))
    const [record] = await log.list()
    assert.match(record?.summary ?? '', /^echo x{9995}… \[1990005 more characters\]$/)
  })
})
