import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { EitriError } from '../errors/eitri-error.ts'
import { runToolCall } from '../tool/run-tool-call.ts'
import type { WorkspaceView } from '../ports/workspace-view.ts'
import { editFileTool } from '../tools/files/edit-file.ts'
import { DirectoryTree } from '../workspace/directory-tree.ts'
import { JsonLinesApprovalLog } from './approval-log.ts'
import type { ApprovalRequest } from './approval.ts'
import { createAccess, type CreateAccessOptions } from './create-access.ts'
import { gateWorkspace } from './gated-workspace.ts'
import { createWorkspaceView } from './confined-workspace.ts'

/**
 * A gated workspace whose approver says yes to everything and remembers what it was asked,
 * and with which signal.
 */
function gated(
  t: TestContext,
  options: CreateAccessOptions = {},
  signal = new AbortController().signal,
) {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-gated-')))
  t.after(() => fs.rmSync(base, { recursive: true, force: true }))
  const root = path.join(base, 'workspace')
  fs.mkdirSync(path.join(root, '.vscode'), { recursive: true })
  fs.writeFileSync(path.join(root, '.vscode', 'settings.json'), '{}')
  fs.writeFileSync(path.join(root, 'notes.txt'), 'notes\n')
  fs.writeFileSync(path.join(base, 'outside.txt'), 'outside\n')
  const asked: ApprovalRequest[] = []
  const signals: AbortSignal[] = []
  const log = new JsonLinesApprovalLog(path.join(base, 'state'))
  const access = createAccess({
    approver: async (request, { signal: askedWith }) => {
      asked.push(request)
      signals.push(askedWith)
      return { type: 'approved', by: 'tester' }
    },
    recorder: log,
    ...options,
  })
  const view = gateWorkspace(
    createWorkspaceView({ tree: new DirectoryTree(root) }),
    access.snapshot(),
    signal,
  )
  return { view, asked, signals, log, root, outside: path.join(base, 'outside.txt') }
}

async function refusal(action: Promise<unknown>): Promise<EitriError> {
  const error = await action.then(
    () => assert.fail('expected a refusal'),
    (caught: unknown) => caught,
  )
  assert.ok(EitriError.isInstance(error), String(error))
  return error
}

const protectedRule = { rules: { allow: ['write_file(.vscode/settings.json)'] } }

describe('the gated workspace asks a person only when a yes would let the action happen', () => {
  it('refuses to create, remove or link a protected path without asking; a whole-file write is asked', async (t) => {
    const { view, asked, root } = gated(t, protectedRule)
    const attempts: [string, (view: WorkspaceView) => Promise<unknown>, RegExp][] = [
      ['remove', (v) => v.remove('.vscode/settings.json'), /not removing it\.$/],
      ['make-folder', (v) => v.makeFolder('.vscode/settings.json'), /not creating a folder at it/],
      [
        'create-symlink',
        (v) => v.createSymlink('.vscode/settings.json', '../notes.txt'),
        /not creating a link at it/,
      ],
    ]
    for (const [name, attempt, words] of attempts) {
      const error = await refusal(attempt(view))
      assert.equal(error.code, 'protected_path', name)
      assert.match(
        error.message,
        /^Refused: .*\.vscode\/settings\.json.* Only writing a whole/,
        name,
      )
      assert.match(error.message, words, name)
    }
    assert.equal(asked.length, 0, 'nobody was asked for what could never be done')
    assert.equal(fs.readFileSync(path.join(root, '.vscode', 'settings.json'), 'utf8'), '{}')
    // The control: a whole-file write of the same path is asked, and a yes writes it.
    await view.writeFile('.vscode/settings.json', '{"a":1}')
    assert.equal(asked.length, 1)
    assert.equal(fs.readFileSync(path.join(root, '.vscode', 'settings.json'), 'utf8'), '{"a":1}')
  })

  it('refuses to remove a path outside at full access without asking; writing it is asked', async (t) => {
    const { view, asked, outside } = gated(t, { setting: 'full-access' })
    const error = await refusal(view.remove(outside))
    assert.equal(error.code, 'path_outside_workspace')
    assert.equal(asked.length, 0)
    assert.equal(fs.existsSync(outside), true)
    await view.writeFile(outside, 'changed\n')
    assert.equal(asked.length, 1)
    assert.equal(asked[0]?.dangerous, true)
  })

  it('asks for a removal a yes allows (untrusted policy), naming the real tool and what it does', async (t) => {
    const { view, asked, log, root } = gated(t, { approval: 'untrusted' })
    await view.forTool?.('js_eval fs.remove').remove('notes.txt')
    assert.equal(fs.existsSync(path.join(root, 'notes.txt')), false)
    await view.forTool?.('js_eval fs.mkdir').makeFolder('made')
    assert.deepEqual(
      asked.map((request) => [request.tool, request.summary, request.input]),
      [
        ['js_eval fs.remove', 'remove notes.txt', { path: 'notes.txt', change: 'remove' }],
        ['js_eval fs.mkdir', 'create the folder made', { path: 'made', change: 'make-folder' }],
      ],
    )
    assert.deepEqual(
      (await log.list()).map((record) => [record.tool, record.summary]),
      [
        ['js_eval fs.remove', 'remove notes.txt'],
        ['js_eval fs.mkdir', 'create the folder made'],
      ],
    )
  })

  it('a tool call asks in its own name, not as write_file', async (t) => {
    const { view, asked } = gated(t, { approval: 'untrusted' })
    const result = await runToolCall(
      editFileTool,
      { path: 'notes.txt', old_string: 'notes', new_string: 'edited' },
      { signal: new AbortController().signal, workspace: view },
    )
    assert.equal(result.type, 'success', result.content)
    assert.deepEqual(
      asked.map((request) => [request.tool, request.summary]),
      [['edit_file', 'write notes.txt']],
    )
  })

  it("asks with the operation's signal, else with the call's, so ending the call withdraws the question", async (t) => {
    const call = new AbortController()
    const { view, signals } = gated(t, { approval: 'untrusted' }, call.signal)
    const own = new AbortController()
    await view.writeFile('notes.txt', 'mine', { signal: own.signal })
    await view.writeFile('notes.txt', 'call')
    assert.equal(signals.length, 2)
    assert.equal(signals[0], own.signal)
    assert.equal(signals[1], call.signal)
    // A tool's view keeps the call's signal.
    const { view: toolView, signals: toolSignals } = gated(
      t,
      { approval: 'untrusted' },
      call.signal,
    )
    await toolView.forTool?.('edit_file').remove('notes.txt')
    assert.deepEqual(toolSignals, [call.signal])
  })
})
