import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { commandMatches, parseRule, PermissionRules, rulesFromConfig } from './permission-rules.ts'

describe('permission rules', () => {
  for (const [specifier, command, expected] of [
    ['npm run test:*', 'npm run test', true],
    ['npm run test:*', 'npm run test:unit', true],
    ['npm run test:*', 'npm run test -- --watch', true],
    ['npm run test:*', 'npm run testing', false],
    ['npm run test:*', 'npm run build', false],
    ['git commit *', 'git commit -m "x"', true],
    ['git commit *', 'git  commit   -am x', true],
    ['git commit *', 'git commit', false],
    ['git commit *', 'git push', false],
    ['ls', 'ls', true],
    ['ls', 'ls -la', false],
    ['echo a.b', 'echo aXb', false],
  ] as const) {
    it(`${specifier} ${expected ? 'matches' : 'does not match'} ${command}`, () => {
      assert.equal(commandMatches(specifier, command), expected)
    })
  }

  it('parses TOOL and TOOL(SPECIFIER), and says what is wrong otherwise', () => {
    assert.deepEqual(parseRule('shell(npm test *)'), {
      source: 'shell(npm test *)',
      tool: 'shell',
      specifier: 'npm test *',
      withoutApproval: false,
    })
    assert.deepEqual(parseRule('shell'), { source: 'shell', tool: 'shell', withoutApproval: false })
    assert.match(parseRule('Bash(ls)') as string, /is not a rule/)
    assert.match(parseRule('shell()') as string, /empty specifier/)
  })

  it('matches path rules by operation and glob', () => {
    const rules = rulesFromConfig({
      allow: [
        'write_file(src/**)',
        { rule: 'write_file(.vscode/settings.json)', approval: 'none' },
      ],
      deny: ['read_file(secrets/**)'],
    })
    assert.equal(
      rules.allowed({ kind: 'path', operation: 'write', path: 'src/a/b.ts' })?.source,
      'write_file(src/**)',
    )
    assert.equal(rules.allowed({ kind: 'path', operation: 'write', path: 'test/a.ts' }), undefined)
    assert.equal(
      rules.allowed({ kind: 'path', operation: 'read', path: 'src/a.ts' }),
      undefined,
      'a write rule does not cover reads',
    )
    assert.equal(
      rules.allowed({ kind: 'path', operation: 'write', path: '.vscode/settings.json' })
        ?.withoutApproval,
      true,
    )
    assert.equal(
      rules.denied({ kind: 'path', operation: 'read', path: 'secrets/key' })?.source,
      'read_file(secrets/**)',
    )
  })

  it('deny matches any part of a command; allow needs every part', () => {
    const rules = new PermissionRules(
      [parseRule('shell(npm test *)') as never, parseRule('shell(ls)') as never],
      [parseRule('shell(git push *)') as never],
    )
    assert.equal(
      rules.denied({ kind: 'command', parts: ['ls', 'git push origin'] })?.source,
      'shell(git push *)',
    )
    assert.ok(rules.allowed({ kind: 'command', parts: ['ls', 'npm test --x'] }))
    assert.equal(rules.allowed({ kind: 'command', parts: ['ls', 'npm publish'] }), undefined)
    assert.equal(rules.allowed({ kind: 'command', parts: [] }), undefined)
  })
})
