import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  judgeHistory,
  packedRefs,
  type HistoryChange,
  type HistoryHost,
  type HistoryProposal,
} from './history-rules.ts'

/** A folder as a map of paths to file contents (folders implied by their files). */
type Files = Record<string, string>

function hostOf(files: Files): HistoryHost {
  const isFolder = (path: string) => Object.keys(files).some((file) => file.startsWith(`${path}/`))
  return {
    async kind(path) {
      if (files[path] !== undefined) return 'file'
      return isFolder(path) ? 'directory' : undefined
    },
    async read(path, maxBytes) {
      const text = files[path]
      return text === undefined || text.length > maxBytes ? undefined : Buffer.from(text)
    },
    async list(path) {
      const names = new Map<string, 'file' | 'directory'>()
      for (const file of Object.keys(files)) {
        if (!file.startsWith(`${path}/`)) continue
        const [name = '', ...rest] = file.slice(path.length + 1).split('/')
        names.set(name, rest.length > 0 ? 'directory' : 'file')
      }
      return [...names].map(([name, type]) => ({ name, type }))
    },
  }
}

function proposalOf(host: Files, next: Files): HistoryProposal {
  return {
    async read(path, maxBytes) {
      const text = next[path]
      return text === undefined || text.length > maxBytes ? undefined : Buffer.from(text)
    },
    async sameAsHost(path) {
      return next[path] !== undefined && next[path] === host[path]
    },
  }
}

const OID = 'a'.repeat(40)
const REPOSITORY: Files = {
  '.git/HEAD': 'ref: refs/heads/main\n',
  '.git/refs/heads/main': `${OID}\n`,
  '.git/refs/heads/topic': `${OID}\n`,
  '.git/packed-refs': `# pack-refs with: peeled\n${OID} refs/tags/v1\n^${OID}\n${OID} refs/heads/old\n`,
  '.git/logs/HEAD': 'line one\nline two\n',
  '.git/objects/ab/cdef': 'object bytes',
  '.git/objects/pack/pack-1.pack': 'pack bytes',
  '.git/objects/info/commit-graph': 'graph',
}

async function judge(changes: HistoryChange[], next: Files = {}) {
  return judgeHistory(changes, hostOf(REPOSITORY), proposalOf(REPOSITORY, next))
}

describe('history rules: no ref lost, reflogs only grow, objects written once', () => {
  const cases: [string, HistoryChange[], Files, string[]][] = [
    // [what, changes, new contents, paths refused]
    [
      'a branch deleted',
      [{ path: '.git/refs/heads/topic', type: 'delete' }],
      {},
      ['.git/refs/heads/topic'],
    ],
    [
      'the refs folder removed',
      [{ path: '.git/refs/heads', type: 'delete' }],
      {},
      ['.git/refs/heads'],
    ],
    [
      'packed-refs rewritten without a tag',
      [{ path: '.git/packed-refs', type: 'file' }],
      { '.git/packed-refs': `${OID} refs/heads/old\n` },
      ['.git/packed-refs'],
    ],
    [
      'packed-refs deleted',
      [{ path: '.git/packed-refs', type: 'delete' }],
      {},
      ['.git/packed-refs'],
    ],
    [
      'a reflog truncated',
      [{ path: '.git/logs/HEAD', type: 'file' }],
      { '.git/logs/HEAD': 'line one\n' },
      ['.git/logs/HEAD'],
    ],
    [
      'a reflog rewritten with the same length',
      [{ path: '.git/logs/HEAD', type: 'file' }],
      { '.git/logs/HEAD': 'line 1!!\nline two\n' },
      ['.git/logs/HEAD'],
    ],
    ['a reflog deleted', [{ path: '.git/logs/HEAD', type: 'delete' }], {}, ['.git/logs/HEAD']],
    [
      'an object deleted',
      [{ path: '.git/objects/ab/cdef', type: 'delete' }],
      {},
      ['.git/objects/ab/cdef'],
    ],
    [
      'an object overwritten',
      [{ path: '.git/objects/ab/cdef', type: 'file' }],
      { '.git/objects/ab/cdef': 'other bytes!' },
      ['.git/objects/ab/cdef'],
    ],
    [
      'a pack deleted',
      [{ path: '.git/objects/pack/pack-1.pack', type: 'delete' }],
      {},
      ['.git/objects/pack/pack-1.pack'],
    ],
    ['HEAD deleted', [{ path: '.git/HEAD', type: 'delete' }], {}, ['.git/HEAD']],
    [
      'an object made a link',
      [{ path: '.git/objects/cd/0000', type: 'symlink' }],
      {},
      ['.git/objects/cd/0000'],
    ],
    [
      'the objects folder of a deleted object',
      [
        { path: '.git/objects/ab/cdef', type: 'delete' },
        { path: '.git/objects/ab', type: 'delete' },
      ],
      {},
      ['.git/objects/ab', '.git/objects/ab/cdef'],
    ],
    // Positive controls: git work that keeps history.
    [
      'a branch moved',
      [{ path: '.git/refs/heads/main', type: 'file' }],
      { '.git/refs/heads/main': `${'b'.repeat(40)}\n` },
      [],
    ],
    [
      'a new branch',
      [{ path: '.git/refs/heads/new', type: 'file' }],
      { '.git/refs/heads/new': `${OID}\n` },
      [],
    ],
    [
      'a loose branch packed (git pack-refs)',
      [
        { path: '.git/refs/heads/topic', type: 'delete' },
        { path: '.git/packed-refs', type: 'file' },
      ],
      {
        '.git/packed-refs': `${OID} refs/tags/v1\n${OID} refs/heads/old\n${OID} refs/heads/topic\n`,
      },
      [],
    ],
    [
      'a packed ref unpacked (loose afterwards)',
      [
        { path: '.git/packed-refs', type: 'file' },
        { path: '.git/refs/tags/v1', type: 'file' },
      ],
      { '.git/packed-refs': `${OID} refs/heads/old\n`, '.git/refs/tags/v1': `${OID}\n` },
      [],
    ],
    [
      'a reflog that grew',
      [{ path: '.git/logs/HEAD', type: 'file' }],
      { '.git/logs/HEAD': 'line one\nline two\nline three\n' },
      [],
    ],
    [
      'a new object',
      [{ path: '.git/objects/cd/0000', type: 'file' }],
      { '.git/objects/cd/0000': 'new' },
      [],
    ],
    [
      'a new pack',
      [{ path: '.git/objects/pack/pack-2.pack', type: 'file' }],
      { '.git/objects/pack/pack-2.pack': 'new' },
      [],
    ],
    [
      'the commit graph rewritten',
      [{ path: '.git/objects/info/commit-graph', type: 'file' }],
      { '.git/objects/info/commit-graph': 'new graph' },
      [],
    ],
    ['the index rewritten', [{ path: '.git/index', type: 'file' }], { '.git/index': 'x' }, []],
    ['a file outside any repository deleted', [{ path: 'src/a.ts', type: 'delete' }], {}, []],
    [
      'a new repository (not the host’s history)',
      [{ path: 'sub/.git/refs/heads/x', type: 'delete' }],
      {},
      [],
    ],
  ]
  for (const [what, changes, next, refused] of cases) {
    it(what, async () => {
      const judgement = await judge(changes, next)
      assert.deepEqual([...judgement.refused.keys()].sort(), [...refused].sort())
    })
  }

  it('an object written again byte for byte changes nothing', async () => {
    const judgement = await judge([{ path: '.git/objects/ab/cdef', type: 'file' }], {
      '.git/objects/ab/cdef': 'object bytes',
    })
    assert.deepEqual([...judgement.refused.keys()], [])
    assert.deepEqual([...judgement.unchanged], ['.git/objects/ab/cdef'])
  })

  it('refusing packed-refs also refuses loose deletions it would have kept', async () => {
    // topic moves into packed-refs, but the same packed-refs drops v1: both are refused.
    const judgement = await judge(
      [
        { path: '.git/refs/heads/topic', type: 'delete' },
        { path: '.git/packed-refs', type: 'file' },
      ],
      { '.git/packed-refs': `${OID} refs/heads/old\n${OID} refs/heads/topic\n` },
    )
    assert.deepEqual([...judgement.refused.keys()].sort(), [
      '.git/packed-refs',
      '.git/refs/heads/topic',
    ])
  })

  it('reads packed-refs names, skipping peel lines and comments', () => {
    assert.deepEqual(
      [...packedRefs(Buffer.from(REPOSITORY['.git/packed-refs'] ?? ''))],
      ['refs/tags/v1', 'refs/heads/old'],
    )
  })
})
