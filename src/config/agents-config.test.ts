import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { openWorkshop } from '../workshop/workshop.ts'
import { loadConfig } from './config-file.ts'

async function withConfig<T>(json: unknown, use: (file: string, folder: string) => Promise<T>) {
  const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-agents-config-'))
  const file = path.join(folder, 'config.json')
  await fs.writeFile(file, JSON.stringify(json))
  try {
    return await use(file, folder)
  } finally {
    await fs.rm(folder, { recursive: true, force: true })
  }
}

describe('the agents and runs configuration', () => {
  it('holds leases for 15 s renewed every 5 s, Runs 4 deep and $10 a session, unless told otherwise', async () => {
    await withConfig({}, async (file) => {
      assert.deepEqual((await loadConfig(file)).runs, {
        leaseTtlMs: 15_000,
        heartbeatMs: 5_000,
        sweepMs: 30_000,
        maxActive: 32,
        maxDepth: 4,
        sessionBudgetDollars: 10,
      })
    })
  })

  it('refuses a session budget that is not a positive number of dollars, naming the field', async () => {
    await withConfig({ runs: { sessionBudgetDollars: 0 } }, async (file) => {
      await assert.rejects(loadConfig(file), /sessionBudgetDollars/)
    })
  })

  it('refuses a depth bound below 1, naming the field', async () => {
    await withConfig({ runs: { maxDepth: 0 } }, async (file) => {
      await assert.rejects(loadConfig(file), /maxDepth/)
    })
  })

  it('refuses a heartbeat as long as the lease, naming the field', async () => {
    await withConfig({ runs: { leaseTtlMs: 1000, heartbeatMs: 1000 } }, async (file) => {
      await assert.rejects(loadConfig(file), /heartbeatMs must be shorter than leaseTtlMs/)
    })
  })

  it('refuses to open a workshop on a bad agent, naming the file, the agent and the field', async () => {
    const agents = [{ id: 'ok', name: 'Ok', prompt: 'p', program: { kind: 'echo', dely: 5 } }]
    await withConfig({ agents }, async (file, folder) => {
      await fs.mkdir(path.join(folder, 'workspace'))
      await assert.rejects(
        openWorkshop({
          workspace: path.join(folder, 'workspace'),
          stateDir: path.join(folder, 'state'),
          configPath: file,
        }),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, 'config_invalid')
          assert.match(error.message, /config\.json \(agents\)/)
          assert.match(error.message, /dely/)
          return true
        },
      )
    })
  })
})
