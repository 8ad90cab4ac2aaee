import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseAgentDef, type AgentDefInput } from './agent-def.ts'
import { childAuthority, type Authority } from './delegation-ceiling.ts'

const parent: Authority = {
  access: 'workspace-write',
  tools: ['js_eval', 'read_file'],
  programKinds: ['echo', 'scripted'],
  depth: 1,
}

function decide(def: Partial<AgentDefInput>, over: Authority | null = parent, maxDepth = 4) {
  return childAuthority({
    parent: over ?? undefined,
    def: parseAgentDef({ id: 'child', program: { kind: 'echo' }, ...def }),
    maxDepth,
  })
}

/** A decision in one line: allowed ACCESS [TOOLS] depth N, or refused:FIELD. */
function shortly(decision: ReturnType<typeof childAuthority>): string {
  if (decision.type === 'refused') return `refused:${decision.field}`
  const { access, tools, depth } = decision.authority
  return `allowed ${access} [${(tools ?? []).join(',')}] depth ${depth}`
}

describe('childAuthority', () => {
  const rows: [string, ReturnType<typeof childAuthority>, string][] = [
    [
      'a child with a subset of tools',
      decide({ tools: ['read_file'] }),
      'allowed read-only [read_file] depth 2',
    ],
    ['no tools at all', decide({}), 'allowed read-only [] depth 2'],
    [
      'access is the lower of the two (the child asks for more)',
      decide({ access: 'full-access' }),
      'allowed workspace-write [] depth 2',
    ],
    [
      'access is the lower of the two (the child asks for less)',
      decide({ access: 'read-only' }),
      'allowed read-only [] depth 2',
    ],
    ['a tool the parent lacks', decide({ tools: ['read_file', 'shell'] }), 'refused:tools'],
    [
      'a program kind the parent does not allow',
      decide({ program: { kind: 'scripted' } }, { ...parent, programKinds: ['echo'] }),
      'refused:program',
    ],
    ['past the depth bound', decide({}, { ...parent, depth: 4 }), 'refused:depth'],
    ['at the depth bound', decide({}, { ...parent, depth: 3 }), 'allowed read-only [] depth 4'],
    ['a configured bound', decide({}, { ...parent, depth: 1 }, 1), 'refused:depth'],
    [
      'no ceiling: the definition alone',
      decide({ access: 'full-access', tools: ['shell'] }, null),
      'allowed full-access [shell] depth 1',
    ],
  ]
  for (const [name, decision, expected] of rows) {
    it(name, () => assert.equal(shortly(decision), expected))
  }

  it('names the tools the parent lacks', () => {
    const decision = decide({ tools: ['shell', 'read_file', 'web_fetch'] })
    assert.equal(decision.type, 'refused')
    assert.match(decision.type === 'refused' ? decision.reason : '', /lacks: shell, web_fetch;/)
  })
})
