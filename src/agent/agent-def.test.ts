import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { EitriError } from '../errors/eitri-error.ts'
import { agentDefHash, checkAgentDef, parseAgentDef, type AgentDefProblem } from './agent-def.ts'

const minimal = { id: 'echoer', program: { kind: 'echo' } } as const

/** The problems of a definition that must fail, as `field: reason` lines. */
function problems(value: unknown, at: (string | number)[] = ['agents', 2]): AgentDefProblem[] {
  const check = checkAgentDef(value, at)
  assert.equal(check.ok, false, 'expected the definition to be refused')
  return check.ok ? [] : [...check.problems]
}

function onlyProblem(value: unknown): AgentDefProblem {
  const found = problems(value)
  assert.equal(found.length, 1, JSON.stringify(found))
  return found[0] as AgentDefProblem
}

describe('AgentDef', () => {
  it('applies the defaults: version 1, available, no skills, no tools, read-only, no metadata', () => {
    assert.deepEqual(
      { ...parseAgentDef(minimal) },
      {
        id: 'echoer',
        version: 1,
        status: 'available',
        skills: [],
        tools: [],
        access: 'read-only',
        program: { kind: 'echo' },
        metadata: {},
      },
    )
  })

  it('keeps every field of a full definition; skills and tools are sets (sorted, each once)', () => {
    const def = parseAgentDef({
      id: 'code-reviewer_2',
      version: 3,
      status: 'retired',
      name: 'Code reviewer',
      prompt: 'Review the change.',
      skills: ['typescript', 'review', 'typescript'],
      tools: ['read_file', 'glob', 'read_file'],
      access: 'workspace-write',
      modelPolicy: { provider: 'anthropic', model: 'claude-x' },
      program: { kind: 'scripted', delayMs: 600_000, reply: 'ok', result: { score: [1, null] } },
      metadata: { team: 'core', tags: ['a'] },
    })
    assert.deepEqual(def.skills, ['review', 'typescript'])
    assert.deepEqual(def.tools, ['glob', 'read_file'])
    assert.equal(def.version, 3)
    assert.equal(def.access, 'workspace-write')
    assert.deepEqual(def.program, {
      kind: 'scripted',
      delayMs: 600_000,
      reply: 'ok',
      result: { score: [1, null] },
    })
  })

  it('refuses an unknown key with its path: repy for reply, and a typo at the top', () => {
    const repy = onlyProblem({ id: 'a', program: { kind: 'scripted', repy: 'hi' } })
    assert.equal(repy.field, 'agents[2].program.repy')
    assert.match(
      repy.reason,
      /unknown key; a scripted program takes only kind, delayMs, reply, result/,
    )
    assert.equal(
      onlyProblem({ ...minimal, program: { kind: 'echo', reply: 'x' } }).field,
      'agents[2].program.reply',
    )
    assert.equal(onlyProblem({ ...minimal, skils: [] }).field, 'agents[2].skils')
    assert.equal(
      onlyProblem({ ...minimal, modelPolicy: { provider: 'p', model: 'm', temperature: 1 } }).field,
      'agents[2].modelPolicy.temperature',
    )
  })

  it('checks each field and names it', () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ program: { kind: 'echo' } }, 'agents[2].id', /is required/],
      [{ ...minimal, id: 'Echoer' }, 'agents[2].id', /lower case/],
      [{ ...minimal, id: '9lives' }, 'agents[2].id', /start with a letter/],
      [{ ...minimal, id: `a${'b'.repeat(64)}` }, 'agents[2].id', /at most 64/],
      [{ ...minimal, version: 0 }, 'agents[2].version', /positive whole number/],
      [{ ...minimal, version: 1.5 }, 'agents[2].version', /positive whole number/],
      [{ ...minimal, status: 'busy' }, 'agents[2].status', /available, unavailable, retired/],
      [{ ...minimal, name: '' }, 'agents[2].name', /must not be empty/],
      [{ ...minimal, skills: 'review' }, 'agents[2].skills', /array of skill names/],
      [{ ...minimal, skills: ['Review'] }, 'agents[2].skills[0]', /lower case/],
      [{ ...minimal, tools: ['read-file'] }, 'agents[2].tools[0]', /tool name/],
      [
        { ...minimal, access: 'root' },
        'agents[2].access',
        /read-only, workspace-write, full-access/,
      ],
      [
        { ...minimal, modelPolicy: { provider: 'p' } },
        'agents[2].modelPolicy.model',
        /is required/,
      ],
      [
        { ...minimal, modelPolicy: { provider: 'p', model: '' } },
        'agents[2].modelPolicy.model',
        /empty/,
      ],
      [{ ...minimal, modelPolicy: 'p/m' }, 'agents[2].modelPolicy', /provider/],
      [{ id: 'a' }, 'agents[2].program', /naming its kind/],
      [
        { id: 'a', program: { kind: 'shell' } },
        'agents[2].program.kind',
        /"echo", "scripted", "llm" \(got "shell"\)/,
      ],
      [
        { id: 'a', program: { kind: 'echo', delayMs: -1 } },
        'agents[2].program.delayMs',
        /0 or more/,
      ],
      [
        { id: 'a', program: { kind: 'echo', delayMs: 600_001 } },
        'agents[2].program.delayMs',
        /at most 600000/,
      ],
      [
        { id: 'a', program: { kind: 'echo', delayMs: 2.5 } },
        'agents[2].program.delayMs',
        /whole number/,
      ],
      [{ id: 'a', program: { kind: 'scripted', reply: 3 } }, 'agents[2].program.reply', /string/],
      [{ ...minimal, metadata: [1] }, 'agents[2].metadata', /must be an object/],
    ]
    for (const [value, field, reason] of cases) {
      const problem = onlyProblem(value)
      assert.equal(problem.field, field, JSON.stringify(value))
      assert.match(problem.reason, reason, JSON.stringify(value))
    }
  })

  it('takes an llm program with its bounds, and requires its model policy', () => {
    const llm = { kind: 'llm', maxModelSteps: 4, budgetDollars: 0.5, autoCompact: true }
    const def = parseAgentDef({
      id: 'a',
      modelPolicy: { provider: 'local', model: 'stub-1' },
      program: llm,
    })
    assert.deepEqual(def.program, llm)
    const missing = onlyProblem({ id: 'a', program: llm })
    assert.equal(missing.field, 'agents[2].modelPolicy')
    assert.match(missing.reason, /required by an llm program/)
    const policy = { provider: 'local', model: 'stub-1' }
    const cases: [unknown, string, RegExp][] = [
      [{ kind: 'llm', maxModelSteps: 0 }, 'maxModelSteps', /at least 1/],
      [{ kind: 'llm', maxModelSteps: 257 }, 'maxModelSteps', /at most 256/],
      [{ kind: 'llm', budgetDollars: 0 }, 'budgetDollars', /more than 0/],
      [{ kind: 'llm', max_model_steps: 3 }, 'max_model_steps', /unknown key.*maxModelSteps/],
      [{ kind: 'llm', compactionModel: 'gpt' }, 'compactionModel', /provider:model/],
    ]
    for (const [program, field, reason] of cases) {
      const problem = onlyProblem({ id: 'a', modelPolicy: policy, program })
      assert.equal(problem.field, `agents[2].program.${field}`, JSON.stringify(program))
      assert.match(problem.reason, reason, JSON.stringify(program))
    }
  })

  it('refuses what is not plain JSON data, with the path and the reason', () => {
    const cycle: Record<string, unknown> = { a: 1 }
    cycle['inner'] = { back: cycle }
    class Point {
      x = 1
    }
    const holey: number[] = [1]
    holey[2] = 3
    const withGetter = {}
    Object.defineProperty(withGetter, 'live', { get: () => 1, enumerable: true })
    const cases: [unknown, string, RegExp][] = [
      [
        { ...minimal, metadata: { run: () => 1 } },
        'agents[2].metadata.run',
        /function is not portable data/,
      ],
      [
        { ...minimal, metadata: { when: new Date(0) } },
        'agents[2].metadata.when',
        /a Date, not plain JSON data/,
      ],
      [{ ...minimal, metadata: { map: new Map() } }, 'agents[2].metadata.map', /a Map/],
      [{ ...minimal, metadata: { point: new Point() } }, 'agents[2].metadata.point', /a Point/],
      [
        { ...minimal, metadata: cycle },
        'agents[2].metadata.inner.back',
        /refers back to agents\[2\]\.metadata \(a cycle\)/,
      ],
      [
        { ...minimal, metadata: { list: [1, undefined] } },
        'agents[2].metadata.list[1]',
        /undefined is not JSON data/,
      ],
      [{ ...minimal, name: undefined }, 'agents[2].name', /undefined is not JSON data/],
      [{ ...minimal, metadata: { list: holey } }, 'agents[2].metadata.list', /hole at \[1\]/],
      [
        { ...minimal, metadata: { n: Number.NaN } },
        'agents[2].metadata.n',
        /NaN is not a JSON number/,
      ],
      [
        { ...minimal, metadata: { n: Infinity } },
        'agents[2].metadata.n',
        /Infinity is not a JSON number/,
      ],
      [{ ...minimal, metadata: { s: Symbol('x') } }, 'agents[2].metadata.s', /symbol/],
      [{ ...minimal, metadata: { [Symbol('k')]: 1 } }, 'agents[2].metadata', /symbol key/],
      [{ ...minimal, metadata: { b: 1n } }, 'agents[2].metadata.b', /bigint/],
      [{ ...minimal, metadata: withGetter }, 'agents[2].metadata', /getter/],
      [
        { ...minimal, program: { kind: 'scripted', result: new Uint8Array(2) } },
        'agents[2].program.result',
        /a Uint8Array/,
      ],
      [
        JSON.parse('{"id":"a","program":{"kind":"echo"},"metadata":{"__proto__":{"x":1}}}'),
        'agents[2].metadata',
        /__proto__/,
      ],
    ]
    for (const [value, field, reason] of cases) {
      const problem = onlyProblem(value)
      assert.equal(problem.field, field)
      assert.match(problem.reason, reason, field)
    }
  })

  it('accepts a value shared by two branches (not a cycle) and a null-prototype object', () => {
    const shared = { k: 1 }
    const bare = Object.assign(Object.create(null) as object, { x: 1 })
    const def = parseAgentDef({ ...minimal, metadata: { one: shared, two: shared, bare } })
    assert.deepEqual(def.metadata, { one: { k: 1 }, two: { k: 1 }, bare: { x: 1 } })
  })

  it('throws invalid_input naming the agent and every wrong field', () => {
    assert.throws(
      () => parseAgentDef({ id: 'writer', version: -1, program: { kind: 'scripted', repy: 'x' } }),
      (error: unknown) => {
        assert.ok(EitriError.isInstance(error))
        assert.equal(error.code, 'invalid_input')
        assert.match(error.message, /^Agent definition "writer" is invalid:/)
        assert.match(error.message, /- version: must be a positive whole number/)
        assert.match(error.message, /- program\.repy: unknown key/)
        assert.deepEqual(error.data['fields'], ['version', 'program.repy'])
        return true
      },
    )
  })

  it('is frozen all the way down, and a copy of what was given', () => {
    const metadata = { tags: ['a'] }
    const def = parseAgentDef({ ...minimal, metadata })
    assert.throws(() => {
      ;(def as { id: string }).id = 'other'
    }, TypeError)
    assert.throws(() => {
      ;(def.skills as string[]).push('x')
    }, TypeError)
    assert.throws(() => {
      ;(def.metadata['tags'] as string[])[0] = 'b'
    }, TypeError)
    assert.throws(() => {
      ;(def.program as { delayMs?: number }).delayMs = 5
    }, TypeError)
    // The caller's objects are neither frozen nor shared.
    assert.equal(Object.isFrozen(metadata), false)
    metadata.tags.push('b')
    assert.deepEqual(def.metadata, { tags: ['a'] })
  })
})

describe('agentDefHash', () => {
  it('is the sha256 of the canonical JSON: key order and written defaults do not matter', () => {
    const hash = agentDefHash({ id: 'a', program: { kind: 'scripted', reply: 'r', delayMs: 5 } })
    assert.match(hash, /^[0-9a-f]{64}$/)
    assert.equal(
      agentDefHash({
        program: { delayMs: 5, reply: 'r', kind: 'scripted' },
        metadata: {},
        tools: [],
        skills: [],
        access: 'read-only',
        status: 'available',
        version: 1,
        id: 'a',
      }),
      hash,
    )
    assert.equal(
      agentDefHash(
        parseAgentDef({ id: 'a', program: { kind: 'scripted', reply: 'r', delayMs: 5 } }),
      ),
      hash,
    )
  })

  it('keeps the hash of a checked definition, and never of an input that may change', () => {
    const input = { id: 'a', program: { kind: 'scripted' as const, reply: 'r' } }
    const checked = parseAgentDef(input)
    const first = agentDefHash(checked)
    assert.equal(agentDefHash(checked), first)
    assert.equal(agentDefHash(input), first)
    // An input is hashed afresh each time: a change to it changes its hash.
    input.program.reply = 'other'
    assert.notEqual(agentDefHash(input), first)
    assert.equal(agentDefHash(input), agentDefHash(parseAgentDef(input)))
    // The checked copy is frozen to the bottom, so its kept hash stays true.
    assert.throws(() => {
      ;(checked.program as { reply: string }).reply = 'other'
    }, TypeError)
    assert.equal(agentDefHash(checked), first)
  })

  it('sorts keys inside metadata and sets, but keeps array order elsewhere', () => {
    const base = { id: 'a', program: { kind: 'echo' } } as const
    assert.equal(
      agentDefHash({ ...base, metadata: { x: { b: 1, a: 2 } }, skills: ['b', 'a'] }),
      agentDefHash({ ...base, metadata: { x: { a: 2, b: 1 } }, skills: ['a', 'b', 'a'] }),
    )
    assert.notEqual(
      agentDefHash({ ...base, metadata: { list: [1, 2] } }),
      agentDefHash({ ...base, metadata: { list: [2, 1] } }),
    )
  })

  it('differs when any field differs', () => {
    const base = { id: 'a', program: { kind: 'echo' } } as const
    const hashes = new Set([
      agentDefHash(base),
      agentDefHash({ ...base, version: 2 }),
      agentDefHash({ ...base, status: 'retired' }),
      agentDefHash({ ...base, name: 'A' }),
      agentDefHash({ ...base, tools: ['glob'] }),
      agentDefHash({ ...base, access: 'full-access' }),
      agentDefHash({ ...base, program: { kind: 'echo', delayMs: 0 } }),
      agentDefHash({ ...base, metadata: { x: null } }),
    ])
    assert.equal(hashes.size, 8)
  })

  it('refuses an invalid definition', () => {
    assert.throws(() => agentDefHash({ id: 'a', program: { kind: 'echo', repy: 1 } } as never), {
      code: 'invalid_input',
    })
  })
})
