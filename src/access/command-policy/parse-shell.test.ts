import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Parser } from 'web-tree-sitter'
import { loadBashParser } from './load-bash-parser.ts'
import { parseShell } from './parse-shell.ts'
import type { ShellUnit, SimpleCommand } from './shell-syntax.ts'

describe('parseShell', () => {
  let parser: Parser
  before(async () => {
    parser = await loadBashParser()
  })
  after(() => parser.delete())

  function units(source: string): readonly ShellUnit[] {
    const parsed = parseShell(parser, source)
    assert.equal(parsed.type, 'parsed', parsed.type === 'error' ? parsed.message : '')
    return parsed.type === 'parsed' ? parsed.units : []
  }

  function commands(source: string): SimpleCommand[] {
    return units(source).flatMap((unit) => (unit.type === 'command' ? [unit.command] : []))
  }

  /** Each command's words: the value, or `<text|prefix>` for a word known only at run time. */
  function words(source: string): string[][] {
    return commands(source).map((command) =>
      command.words.map((word) => word.value ?? `<${word.text}|${word.staticPrefix}>`),
    )
  }

  it('removes quotes as the shell does and marks what only the run knows', () => {
    assert.deepEqual(
      words(`s"u"do 'a b' \\x $'\\x41' ~/x ~bob $HOME/y "\${HOME}" "$v" pre$(id)post a\\ b`),
      [
        ['id'],
        ['sudo', 'a b', 'x', 'A', '~/x', '~', '~/y', '~', '<"$v"|>', '<pre$(id)post|pre>', 'a b'],
      ],
    )
  })

  it('marks unquoted globs and braces, and escapes quoted ones in the pattern', () => {
    const [command] = commands(`rm /u* '/e*' /{a,b} "*"x`)
    assert.deepEqual(
      command?.words.slice(1).map((word) => [word.value, word.glob, word.pattern]),
      [
        ['/u*', true, '/u*'],
        ['/e*', false, '/e\\*'],
        ['/{a,b}', true, '/{a,b}'],
        ['*x', false, '\\*x'],
      ],
    )
  })

  it('gives words written after a redirection back to the command', () => {
    const [command] = commands('rm >/dev/null -rf / 2>&1')
    assert.deepEqual(
      command?.words.map((word) => word.value),
      ['rm', '-rf', '/'],
    )
    assert.deepEqual(
      command?.redirects.map((redirect) => [redirect.operator, redirect.target?.value]),
      [
        ['>', '/dev/null'],
        ['>&', '1'],
      ],
    )
  })

  it('knows where each command reads its input from', () => {
    const found = commands('curl x | tee f | (sh); bash <<EOF\nls\nEOF\nsh < s.sh; cat')
    assert.deepEqual(
      found.map((command) => [
        command.words[0]?.value,
        command.stdin.type === 'pipe'
          ? command.stdin.upstream.map((upstream) => upstream.words[0]?.value).join(',')
          : command.stdin.type === 'document'
            ? `document:${command.stdin.body.value ?? '?'}`
            : command.stdin.type,
      ]),
      [
        ['curl', 'inherited'],
        ['tee', 'curl'],
        ['sh', 'curl,tee'],
        ['bash', 'document:ls\n'],
        ['sh', 'file'],
        ['cat', 'inherited'],
      ],
    )
  })

  it('follows a pipeline that continues after a here-document line', () => {
    const [curl, shell] = commands('curl x <<EOF | sh\nbody\nEOF')
    assert.equal(shell?.stdin.type === 'pipe' && shell.stdin.upstream[0], curl)
  })

  it('collects commands from substitutions before the command that uses them', () => {
    assert.deepEqual(
      words('echo "$(date)" `pwd` <(ls) ${x:-$(id)}').map((command) => command[0]),
      ['date', 'pwd', 'ls', 'id', 'echo'],
    )
  })

  it('finds backquoted commands the grammar leaves in literal text', () => {
    assert.deepEqual(words('cat <<EOF\nuse `npm test` \\`not this\\`\nEOF'), [
      ['npm', 'test'],
      ['cat'],
    ])
    assert.deepEqual(words("cat <<'EOF'\nuse `npm test`\nEOF"), [['cat']])
    assert.deepEqual(words('echo `echo \\`id\\``'), [
      ['id'],
      ['echo', '<`id`|>'],
      ['echo', '<`echo \\`id\\``|>'],
    ])
  })

  it('keeps assignments, tests and block redirections as units of their own', () => {
    assert.deepEqual(
      units('A=1 B=$(id); export PATH=/x; [[ -f a ]]; { ls; } > out').map((unit) =>
        unit.type === 'assignment'
          ? `assignment:${unit.assignments.map((assignment) => assignment.name).join(',')}`
          : unit.type === 'command'
            ? `command:${unit.command.words[0]?.value ?? ''}`
            : unit.type,
      ),
      ['command:id', 'assignment:A,B', 'command:export', 'construct', 'command:ls', 'redirect'],
    )
  })

  it('reads declaration builtins, unset and [ … ] as commands with their words', () => {
    assert.deepEqual(words('export -n A=1 "B=$x" C; unset -v D; [ -v a -o ! -n "$y" ]'), [
      ['export', '-n', 'A=1', '<"B=$x"|B=>', 'C'],
      ['unset', '-v', 'D'],
      ['[', '-v', 'a', '-o', '!', '-n', '<"$y"|>', ']'],
    ])
    assert.deepEqual(words('declare a[$(id)]=1 x+=2'), [['id'], ['declare', 'a[$(id)]=1', 'x+=2']])
  })

  it('reads the variable of a for loop and of `{NAME}<file` as assignments', () => {
    const names = (source: string) =>
      units(source).flatMap((unit) =>
        unit.type === 'assignment'
          ? unit.assignments.map((assignment) => assignment.name)
          : unit.type === 'command'
            ? unit.command.assignments.map((assignment) => assignment.name)
            : [],
      )
    assert.deepEqual(names('for x in a; do :; done; select y in b; do :; done'), ['x', 'y'])
    assert.deepEqual(names(': {fd}<f; exec {out}>g; echo {a}'), ['fd', 'out'])
  })

  it('adds a unit for arithmetic that could run a command hidden in a value', () => {
    const risks = (source: string) =>
      units(source).flatMap((unit) => (unit.type === 'construct' ? [unit.risk ?? 'none'] : []))
    assert.equal(risks('echo $((x + 1))').length, 1)
    assert.equal(risks('echo "${s:n}"').length, 1)
    assert.deepEqual(risks('echo $((1 + 2)) ${s:1:2} ${a[0]} ${a[@]} $(($# * 2))'), [])
    assert.deepEqual(risks('[[ -n $x ]]'), ['none'])
  })

  it('answers a message, not an exception, for invalid shell', () => {
    const cases: [string, string][] = [
      ['echo "x', 'unexpected "\\"x" at line 1, column 6'],
      ['if true; then', 'missing "fi" at line 1, column 14'],
      ['echo `x', 'missing "`" at line 1, column 8'],
      ['cat <<EOF\n`x\nEOF', 'a backquote (`) is never closed'],
      ['{ ls; } > out extra', 'unexpected word after a redirection: extra'],
    ]
    for (const [source, message] of cases) {
      assert.deepEqual(parseShell(parser, source), { type: 'error', message }, source)
    }
  })
})
