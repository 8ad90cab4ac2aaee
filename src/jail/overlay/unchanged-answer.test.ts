/**
 * A warm command that changed nothing is answered before its overlay's unmount and the next
 * command's mount (decision 0058): the layer host is stopped while the command finishes, and
 * the answer still comes; the next command then takes the overlay mounted ahead. A command
 * that changed something is still answered only after its changes are back.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { createWorkspaceView } from '../../access/confined-workspace.ts'
import { jailIdentity } from '../../bubblewrap/jail-identity.ts'
import { DirectoryTree } from '../../workspace/directory-tree.ts'
import { JailWorkspaces } from '../jail-workspaces.ts'
import type { Layer } from './overlay-workspace.ts'

/** A workspace of one file and its overlays, closed after the test. */
async function overlays(t: TestContext) {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-unchanged-test-')))
  const workspace = path.join(base, 'workspace')
  fs.mkdirSync(workspace)
  fs.writeFileSync(path.join(workspace, 'a.txt'), 'one')
  const tree = new DirectoryTree(workspace)
  const workspaces = new JailWorkspaces(
    { tree, view: createWorkspaceView({ tree }), layers: 'overlay', temporaryRoot: base },
    jailIdentity(),
    () => [],
  )
  t.after(async () => {
    await workspaces.close()
    fs.rmSync(base, { recursive: true, force: true })
  })
  const overlay = await workspaces.overlay()
  assert.ok(overlay !== undefined, `the overlays could not open: ${workspaces.layers.reason}`)
  const point = await overlay.sharedPoint('test')
  // The layer host's PID, from the namespace a start enters.
  const mnt = overlay.namespaces().find((namespace) => namespace.type === 'mnt')
  const host = Number(/\/proc\/(\d+)\//.exec(mnt?.path ?? '')?.[1])
  assert.ok(host > 0)
  return { workspace, workspaces, overlay, point, host }
}

/** Resolves with `promise`'s value, or with 'pending' if it has not settled in `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'pending'>((resolve) => (timer = setTimeout(resolve, ms, 'pending')))
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

/**
 * Finishes a warm command's `layer` while the layer host `host` is stopped: what it answered
 * within `ms` (or 'pending'), and the whole finish, once the host goes on.
 */
async function finishStopped(
  workspaces: JailWorkspaces,
  layer: Layer,
  host: number,
  ms: number,
): Promise<{ early: unknown; finished: Promise<unknown> }> {
  process.kill(host, 'SIGSTOP')
  try {
    const finished = workspaces.finish(
      { type: 'overlay', layer },
      true,
      { writable: true },
      { counted: true },
    )
    return { early: await within(finished, ms), finished }
  } finally {
    process.kill(host, 'SIGCONT')
  }
}

describe("a warm command's overlay", () => {
  it('is answered unchanged while the layer host is stopped, and the next command takes the overlay mounted after', async (t) => {
    const { workspaces, overlay, point, host } = await overlays(t)
    const layer = await workspaces.mount(overlay, point, true)
    const { early } = await finishStopped(workspaces, layer, host, 5000)
    assert.deepEqual(early, { written: [], deleted: [], refused: [], kept: [] })
    // The next command's mount waits for the unmount and takes the overlay mounted ahead.
    const next = await workspaces.mount(overlay, point, true)
    assert.notEqual(next.folder, layer.folder)
    assert.ok(fs.existsSync(path.join(next.folder, 'work', 'work')), 'the next overlay is mounted')
    await workspaces.finish({ type: 'overlay', layer: next }, true, { writable: true })
  })

  it('is answered after its changes are back when it changed something (the control)', async (t) => {
    const { workspace, workspaces, overlay, point, host } = await overlays(t)
    const layer = await workspaces.mount(overlay, point, true)
    assert.ok(layer.upper !== undefined)
    fs.writeFileSync(path.join(layer.upper, 'b.txt'), 'two')
    const { early, finished } = await finishStopped(workspaces, layer, host, 500)
    assert.equal(early, 'pending')
    const report = (await finished) as { written: string[] }
    assert.deepEqual(report.written, ['b.txt'])
    assert.equal(fs.readFileSync(path.join(workspace, 'b.txt'), 'utf8'), 'two')
  })
})
