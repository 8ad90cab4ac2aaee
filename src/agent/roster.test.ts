import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { EitriError } from '../errors/eitri-error.ts'
import { agentDefHash, type AgentDefInput } from './agent-def.ts'
import { Roster } from './roster.ts'
import { MAX_ROSTER_FILE_BYTES } from './roster-file.ts'

const echoer: AgentDefInput = { id: 'echoer', skills: ['echo'], program: { kind: 'echo' } }
const reviewer: AgentDefInput = {
  id: 'reviewer',
  skills: ['review', 'typescript'],
  tools: ['read_file'],
  program: { kind: 'scripted', reply: 'looks good' },
}
const writer: AgentDefInput = {
  id: 'writer',
  status: 'unavailable',
  skills: ['typescript', 'write'],
  program: { kind: 'scripted', result: { ok: true } },
}

/** The EitriError `run` throws, checked for `code`. */
function refusal(run: () => unknown, code: string): EitriError {
  try {
    run()
  } catch (error) {
    assert.ok(EitriError.isInstance(error), String(error))
    assert.equal(error.code, code, error.message)
    return error
  }
  assert.fail(`expected ${code}`)
}

async function refusalOf(promise: Promise<unknown>, code: string): Promise<EitriError> {
  try {
    await promise
  } catch (error) {
    assert.ok(EitriError.isInstance(error), String(error))
    assert.equal(error.code, code, error.message)
    return error
  }
  assert.fail(`expected ${code}`)
}

describe('Roster', () => {
  it('is immutable: make returns a new roster and leaves the old one as it was', () => {
    const empty = Roster.empty()
    const one = empty.make(echoer)
    assert.notEqual(one, empty)
    assert.equal(empty.size, 0)
    assert.equal(one.size, 1)
    assert.ok(Object.isFrozen(one))
    assert.throws(() => {
      ;(one.list() as unknown[]).push(echoer)
    }, TypeError)
    assert.throws(() => {
      ;(one.lookup('echoer') as { status: string }).status = 'retired'
    }, TypeError)
  })

  it('make is idempotent for an identical definition, however it is written', () => {
    const roster = Roster.empty().make(echoer)
    assert.equal(roster.make(echoer), roster)
    assert.equal(
      roster.make({
        program: { kind: 'echo' },
        skills: ['echo', 'echo'],
        version: 1,
        id: 'echoer',
      }),
      roster,
    )
  })

  it('make refuses a conflicting definition with the same id, pointing at revise', () => {
    const roster = Roster.empty().make(echoer)
    const error = refusal(
      () => roster.make({ ...echoer, program: { kind: 'echo', delayMs: 10 } }),
      'conflict',
    )
    assert.match(
      error.message,
      /Agent "echoer" is already in the roster \(version 1\).*revise\("echoer"/,
    )
    assert.deepEqual(error.data, { id: 'echoer', version: 1 })
  })

  it('make refuses an invalid definition, naming the field', () => {
    const error = refusal(
      () => Roster.empty().make({ id: 'x', program: { kind: 'scripted', repy: 'hi' } } as never),
      'invalid_input',
    )
    assert.match(error.message, /Agent definition "x" is invalid:\n- program\.repy: unknown key/)
  })

  it('revise makes version + 1 with the changes, and leaves the old roster alone', () => {
    const before = Roster.of([echoer, reviewer])
    const after = before.revise('reviewer', { program: { kind: 'scripted', reply: 'needs work' } })
    const revised = after.lookup('reviewer')
    assert.equal(revised.version, 2)
    assert.deepEqual(revised.program, { kind: 'scripted', reply: 'needs work' })
    assert.deepEqual(revised.skills, ['review', 'typescript'])
    assert.equal(before.lookup('reviewer').version, 1)
    assert.equal(after.revise('reviewer', { name: 'R' }).lookup('reviewer').version, 3)
    assert.equal(after.lookup('echoer'), before.lookup('echoer'))
  })

  it('revise refuses changing the id or setting the version, and checks the result', () => {
    const roster = Roster.of([reviewer])
    const renamed = refusal(() => roster.revise('reviewer', { id: 'critic' }), 'invalid_input')
    assert.match(renamed.message, /cannot change an agent's id \("reviewer" to "critic"\)/)
    assert.equal(roster.revise('reviewer', { id: 'reviewer' }).lookup('reviewer').version, 2)
    const versioned = refusal(() => roster.revise('reviewer', { version: 7 }), 'invalid_input')
    assert.match(versioned.message, /becomes version 2\); leave version out/)
    const invalid = refusal(
      () => roster.revise('reviewer', { access: 'root' } as never),
      'invalid_input',
    )
    assert.match(invalid.message, /"reviewer" \(as revised\) is invalid:\n- access:/)
    const notPlain = refusal(
      () => roster.revise('reviewer', { metadata: { when: new Date() } }),
      'invalid_input',
    )
    assert.match(notPlain.message, /^changes\.metadata\.when: a Date/)
    refusal(() => roster.revise('nobody', { name: 'N' }), 'not_found')
  })

  it('lookup by id or by ref; a stale ref is an error naming the current version', () => {
    const roster = Roster.of([reviewer]).revise('reviewer', { name: 'R' })
    assert.equal(roster.lookup('reviewer').version, 2)
    assert.equal(roster.lookup({ id: 'reviewer', version: 2 }).name, 'R')
    assert.deepEqual(roster.ref('reviewer'), { id: 'reviewer', version: 2 })
    const stale = refusal(() => roster.lookup({ id: 'reviewer', version: 1 }), 'conflict')
    assert.match(stale.message, /version 1 is stale: the roster holds version 2/)
    assert.deepEqual(stale.data, { id: 'reviewer', version: 1, currentVersion: 2 })
    const missing = refusal(() => roster.lookup('critic'), 'not_found')
    assert.match(missing.message, /No agent "critic" in the roster\. It has: reviewer\./)
    refusal(() => roster.lookup({ id: 'reviewer' } as never), 'invalid_input')
    refusal(() => roster.lookup({ id: 'reviewer', version: 2, extra: 1 } as never), 'invalid_input')
    refusal(() => roster.lookup(3 as never), 'invalid_input')
  })

  it('list is sorted by id', () => {
    const roster = Roster.of([writer, echoer, reviewer])
    assert.deepEqual(
      roster.list().map((def) => def.id),
      ['echoer', 'reviewer', 'writer'],
    )
  })

  it('select filters by status, skill, skills (all of them) and where', () => {
    const roster = Roster.of([writer, echoer, reviewer])
    const ids = (selector: Parameters<Roster['select']>[0]) =>
      roster.select(selector).map((def) => def.id)
    assert.deepEqual(ids({}), ['echoer', 'reviewer', 'writer'])
    assert.deepEqual(ids({ status: 'available' }), ['echoer', 'reviewer'])
    assert.deepEqual(ids({ status: 'retired' }), [])
    assert.deepEqual(ids({ skill: 'typescript' }), ['reviewer', 'writer'])
    assert.deepEqual(ids({ skills: ['typescript', 'write'] }), ['writer'])
    assert.deepEqual(ids({ skills: [] }), ['echoer', 'reviewer', 'writer'])
    assert.deepEqual(ids({ where: (def) => def.tools.includes('read_file') }), ['reviewer'])
    assert.deepEqual(ids({ status: 'available', skill: 'typescript' }), ['reviewer'])
    refusal(() => roster.select({ skil: 'x' } as never), 'invalid_input')
    refusal(() => roster.select({ status: 'busy' } as never), 'invalid_input')
    refusal(() => roster.select({ skills: 'review' } as never), 'invalid_input')
    refusal(() => roster.select({ where: true } as never), 'invalid_input')
  })

  it('fromJSON names the agent (index and id) and the field of every problem', () => {
    const error = refusal(
      () =>
        Roster.fromJSON(
          {
            agents: [
              echoer,
              { id: 'reviewer', program: { kind: 'echo' } },
              { id: 'writer', program: { kind: 'scripted', repy: 'x' } },
              { id: 'echoer', program: { kind: 'echo' } },
            ],
          },
          'team.json',
        ),
      'invalid_input',
    )
    assert.match(error.message, /^Roster file team\.json is invalid:/)
    assert.match(
      error.message,
      /- agents\[2\] \(id "writer"\): agents\[2\]\.program\.repy: unknown key; a scripted program takes only/,
    )
    assert.match(
      error.message,
      /- agents\[3\] \(id "echoer"\): agents\[3\]\.id: the same id as agents\[0\]/,
    )
    assert.equal(error.data['file'], 'team.json')
    assert.equal(error.data['index'], 2)
    assert.equal(error.data['id'], 'writer')
    assert.equal(error.data['field'], 'agents[2].program.repy')
  })

  it('fromJSON refuses a wrong shape around the agents', () => {
    assert.match(refusal(() => Roster.fromJSON([]), 'invalid_input').message, /must be an object/)
    assert.match(refusal(() => Roster.fromJSON({}), 'invalid_input').message, /agents: is required/)
    assert.match(
      refusal(() => Roster.fromJSON({ agents: [], team: 'x' }), 'invalid_input').message,
      /team: unknown key/,
    )
    assert.match(
      refusal(() => Roster.fromJSON({ agents: { echoer } }), 'invalid_input').message,
      /agents: must be an array/,
    )
    const notPlain = refusal(
      () => Roster.fromJSON({ agents: [{ ...echoer, metadata: { f: () => 1 } }] }),
      'invalid_input',
    )
    assert.match(
      notPlain.message,
      /agents\[0\] \(id "echoer"\): agents\[0\]\.metadata\.f: a function/,
    )
  })
})

describe('Roster files', () => {
  let folder: string
  beforeEach(() => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-roster-'))
  })
  afterEach(() => fs.rmSync(folder, { recursive: true, force: true }))

  it('saves and loads back the same roster, with the defaults written out', async () => {
    const file = path.join(folder, 'team', 'roster.json')
    const roster = Roster.of([writer, echoer, reviewer]).revise('echoer', { name: 'Echo' })
    await roster.save(file)
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { agents: { id: string }[] }
    assert.deepEqual(
      saved.agents.map((agent) => agent.id),
      ['echoer', 'reviewer', 'writer'],
    )
    assert.deepEqual(saved.agents[0], {
      id: 'echoer',
      version: 2,
      status: 'available',
      name: 'Echo',
      skills: ['echo'],
      tools: [],
      access: 'read-only',
      program: { kind: 'echo' },
      metadata: {},
    })
    const loaded = await Roster.load(file)
    assert.deepEqual(loaded.list(), roster.list())
    for (const def of roster.list()) {
      assert.equal(agentDefHash(loaded.lookup(def.id)), agentDefHash(def))
    }
    // No temporary file is left beside it.
    assert.deepEqual(fs.readdirSync(path.dirname(file)), ['roster.json'])
  })

  it('save replaces the file by a rename: the old file is never written in place', async () => {
    const file = path.join(folder, 'roster.json')
    await Roster.of([echoer]).save(file)
    const before = fs.readFileSync(file, 'utf8')
    // A second name for the old file: a write in place (truncate, then write) would change it.
    fs.linkSync(file, path.join(folder, 'old.json'))
    await Roster.of([reviewer]).save(file)
    assert.equal(fs.readFileSync(path.join(folder, 'old.json'), 'utf8'), before)
    assert.deepEqual(
      (await Roster.load(file)).list().map((def) => def.id),
      ['reviewer'],
    )
    assert.deepEqual(fs.readdirSync(folder).sort(), ['old.json', 'roster.json'])
  })

  it('a save that fails leaves the old roster whole and no temporary file', async () => {
    const file = path.join(folder, 'roster.json')
    await Roster.of([echoer]).save(file)
    const before = fs.readFileSync(file, 'utf8')
    const controller = new AbortController()
    controller.abort()
    await assert.rejects(Roster.of([reviewer]).save(file, { signal: controller.signal }), {
      name: 'AbortError',
    })
    assert.equal(fs.readFileSync(file, 'utf8'), before)
    // A rename onto a folder fails after the temporary file is written: it is removed.
    const blocked = path.join(folder, 'blocked.json')
    fs.mkdirSync(path.join(blocked, 'inside'), { recursive: true })
    await assert.rejects(Roster.of([reviewer]).save(blocked))
    assert.deepEqual(fs.readdirSync(folder).sort(), ['blocked.json', 'roster.json'])
  })

  it('a corrupt or invalid file is refused naming the file, the agent and the field', async () => {
    const file = path.join(folder, 'roster.json')
    fs.writeFileSync(file, '{"agents": [')
    const corrupt = await refusalOf(Roster.load(file), 'invalid_input')
    assert.match(corrupt.message, new RegExp(`^Roster file ${file} is not valid JSON`))

    fs.writeFileSync(
      file,
      JSON.stringify({
        agents: [echoer, { id: 'helper', program: { kind: 'echo', delayMs: 'soon' } }],
      }),
    )
    const invalid = await refusalOf(Roster.load(file), 'invalid_input')
    assert.match(invalid.message, new RegExp(`^Roster file ${file} is invalid:`))
    assert.match(invalid.message, /- agents\[1\] \(id "helper"\): agents\[1\]\.program\.delayMs: /)
    assert.equal(invalid.data['file'], file)

    fs.writeFileSync(
      file,
      '{"agents": [{"id": "a", "program": {"kind": "echo"}, "__proto__": {}}]}',
    )
    assert.match((await refusalOf(Roster.load(file), 'invalid_input')).message, /__proto__/)
  })

  it('a missing file is not_found; a folder or an oversized file is refused', async () => {
    const missing = await refusalOf(Roster.load(path.join(folder, 'none.json')), 'not_found')
    assert.match(missing.message, /Roster file not found: .*none\.json/)
    assert.match((await refusalOf(Roster.load(folder), 'invalid_input')).message, /is not a file/)
    const big = path.join(folder, 'big.json')
    fs.writeFileSync(big, ' '.repeat(MAX_ROSTER_FILE_BYTES + 1))
    assert.match((await refusalOf(Roster.load(big), 'invalid_input')).message, /over the \d+/)
  })

  it('fromText reads a workspace file text the same way, naming its source', () => {
    const text = JSON.stringify({ agents: [echoer] })
    assert.equal(Roster.fromText(text, 'agents/roster.json').lookup('echoer').version, 1)
    assert.match(
      refusal(() => Roster.fromText('nope', 'agents/roster.json'), 'invalid_input').message,
      /^Roster file agents\/roster\.json is not valid JSON/,
    )
  })
})
