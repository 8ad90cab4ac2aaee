import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before } from 'node:test'
import { storeContract } from '../store-contract.ts'

let folder: string
let count = 0
before(async () => {
  folder = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-sqlite-'))
})
after(() => fs.rm(folder, { recursive: true, force: true }))

storeContract({
  name: 'sqlite',
  freshUrl: async () => `sqlite:${path.join(folder, `store-${++count}.sqlite`)}`,
})
