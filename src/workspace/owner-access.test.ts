import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ownerMay, ownerMayReplace, ownerRefusal, type OwnerNeed } from './owner-access.ts'

const OWNER = { uid: 1000, gid: 1000 }

describe('ownerMay', () => {
  const cases: {
    name: string
    entry: { uid: number; gid: number; mode: number }
    allowed: readonly OwnerNeed[]
  }[] = [
    {
      name: 'its own 0600 file',
      entry: { uid: 1000, gid: 1000, mode: 0o600 },
      allowed: ['read', 'write'],
    },
    { name: "another's 0600 file", entry: { uid: 1001, gid: 1001, mode: 0o600 }, allowed: [] },
    {
      name: "another's 0644 file",
      entry: { uid: 1001, gid: 1001, mode: 0o644 },
      allowed: ['read'],
    },
    {
      name: "another's 0640 file of the owner's group",
      entry: { uid: 1001, gid: 1000, mode: 0o640 },
      allowed: ['read'],
    },
    {
      // The owner's bits decide for the owner, even when the others' would allow more.
      name: 'its own 0047 file',
      entry: { uid: 1000, gid: 1000, mode: 0o047 },
      allowed: [],
    },
    {
      name: "another's 0700 folder",
      entry: { uid: 1001, gid: 1001, mode: 0o40700 },
      allowed: [],
    },
    {
      name: "another's 0711 folder",
      entry: { uid: 1001, gid: 1001, mode: 0o40711 },
      allowed: ['search'],
    },
    {
      name: 'its own 0755 folder',
      entry: { uid: 1000, gid: 1000, mode: 0o40755 },
      allowed: ['read', 'write', 'search', 'change'],
    },
    {
      // A folder needs write and search to change: write alone is not enough.
      name: "another's 0772 folder of the owner's group",
      entry: { uid: 1001, gid: 1000, mode: 0o40772 },
      allowed: ['read', 'write', 'search', 'change'],
    },
    {
      name: "another's 0752 folder of the owner's group (the group's bits, not the others' write)",
      entry: { uid: 1001, gid: 1000, mode: 0o40752 },
      allowed: ['read', 'search'],
    },
  ]
  for (const { name, entry, allowed } of cases) {
    it(`allows ${allowed.join(', ') || 'nothing'} on ${name}`, () => {
      for (const need of ['read', 'write', 'search', 'change'] as const)
        assert.equal(ownerMay(OWNER, entry, need), allowed.includes(need), need)
    })
  }
})

describe('ownerMayReplace', () => {
  const folder = { uid: 1000, gid: 1000, mode: 0o40755 }
  it("replaces its own entries in its own folder, whatever the entry's mode", () => {
    assert.equal(ownerMayReplace(OWNER, folder, { uid: 1000, gid: 1000, mode: 0o444 }), true)
  })
  it("never replaces another user's entry, or one of another group (the jail maps neither)", () => {
    assert.equal(ownerMayReplace(OWNER, folder, { uid: 1001, gid: 1000, mode: 0o666 }), false)
    assert.equal(ownerMayReplace(OWNER, folder, { uid: 1000, gid: 1001, mode: 0o666 }), false)
  })
  it('never replaces in a folder it may not change', () => {
    const closed = { uid: 1001, gid: 1001, mode: 0o40755 }
    assert.equal(ownerMayReplace(OWNER, closed, { uid: 1000, gid: 1000, mode: 0o644 }), false)
  })
})

describe('ownerRefusal', () => {
  it('names the path, the folder that cannot be entered, and what to do', () => {
    const refusal = ownerRefusal('private/a.txt', 'read', { folder: 'private' })
    assert.equal(refusal.code, 'permission_denied')
    assert.match(refusal.message, /^Permission denied: private\/a\.txt: /)
    assert.match(refusal.message, /may not enter the folder private/)
    assert.match(refusal.message, /change the owner or mode/)
  })
})
