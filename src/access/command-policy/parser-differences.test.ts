/**
 * Where the bash grammar the policy parses with and bash itself part, tried against real bash.
 *
 * Each attack is a command in which bash runs `touch pwned` while the grammar, read alone, finds
 * no such command (the attack would pass without the checks of parser-differences.ts); the
 * policy refuses it. Each control is the harmless spelling of the same thing: bash runs exactly
 * the commands the policy saw, word for word, and the policy still allows it.
 *
 * Bash is the oracle: it runs the command in an empty folder with an empty PATH, so no program
 * runs, and a `command_not_found_handle` (loaded through BASH_ENV) writes down the words of every
 * command bash would have run.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Node, Parser } from 'web-tree-sitter'
import type { CommandRule } from './command-judgement.ts'
import { CommandPolicy } from './command-policy.ts'
import { runQuietly } from '../../../test/helpers/run-quietly.ts'
import { loadBashParser } from './load-bash-parser.ts'
import { parseShell } from './parse-shell.ts'

interface Difference {
  readonly attack: string
  /** The rule that refuses the attack (`unparseable` where the grammar fails outright). */
  readonly rule?: CommandRule
  readonly control: string
}

/** Here-documents whose delimiter is not a plain word, or is joined from two lines. */
const HEREDOCS: readonly Difference[] = [
  { attack: 'cat <<E"O"F\nEOF\ntouch pwned\nE"O"F', control: 'cat <<"EOF"\ntouch pwned\nEOF' },
  { attack: "cat <<E'O'F\nx\nEOF\ntouch pwned\nE'O'F", control: "cat <<'EOF'\nx\nEOF\nls x" },
  // Bash joins `EO\` and `F` of an unquoted here-document into its delimiter; quoted, it does not.
  {
    attack: 'cat <<EOF\nx\nEO\\\nF\ntouch pwned\nEOF',
    control: "cat <<'EOF'\nx\nEO\\\nF\ntouch pwned\nEOF",
  },
]

/**
 * A here-document whose first line is a lone backslash: the grammar takes it for a line
 * continuation of the command and the next line for more words of it (a quoted `'…'`), bash
 * for the body, where `$(…)` inside the quotes runs.
 */
const HEREDOC_FIRST_LINES: readonly Difference[] = [
  { attack: "cat <<EOF\n\\\n'$(touch pwned)'\nEOF", control: "cat <<EOF\n\n\n'$(ls x)'\nEOF" },
  {
    attack: "cat <<EOF | cat\n\\\n'\n$(touch pwned)'\nEOF",
    control: 'cat <<EOF \\\n  | cat\n$(ls x)\nEOF',
  },
]

/**
 * Here-document lines that start with blanks: the grammar takes such a line for plain text,
 * bash expands the substitution in it.
 */
const HEREDOC_BODIES: readonly Difference[] = [
  { attack: 'cat <<EOF\n  $(touch pwned)\nEOF', control: 'cat <<EOF\n$(ls x)\n  text\nEOF' },
  {
    attack: 'cat <<-EOF\n\t$(touch pwned)\n\tEOF',
    control: "cat <<-'EOF'\n\t$(touch pwned)\n\tEOF",
  },
  {
    attack: 'cat <<EOF\nok\n \t$(touch pwned) x\nEOF',
    control: 'cat <<EOF\nok\n$(ls x) \t x\nEOF',
  },
]

/** Characters the grammar takes for blanks and bash does not, and a backslash before CR LF. */
const BLANKS: readonly Difference[] = [
  ...['\v', '\f', '\r'].map((blank) => ({
    attack: `ls${blank}# ; touch pwned`,
    // Inside quotes both read the character as text.
    control: `ls '${blank}' "${blank}" # ; touch pwned`,
  })),
  { attack: 'ls \\\r\ntouch pwned', control: 'ls \\\ntouch pwned' },
]

/** Quotes and backslashes inside `${…}`, which bash reads by operator and quoting. */
const EXPANSIONS: readonly Difference[] = [
  {
    attack: `x=abc; cat "\${x:+'$(touch pwned)'}"`,
    control: `x=abc; cat "\${x:+'a b'}" \${x:-"a b"}`,
  },
  {
    attack: `x=abc; cat \${x#\\'} ; touch pwned #'}`,
    control: 'x=abc; cat ${x#\\~} ; ls #}',
  },
  {
    attack: `x=abc; cat "\${x%\\'}" ; touch pwned #'}"`,
    control: 'x=abc; cat "${x/#\\~/$HOME}"',
  },
]

/**
 * A line continuation in double quotes or an unquoted here-document, which bash deletes there
 * too: after a `$` it joins the `$` to what follows (`$(…)`, `${x@P}`), which the grammar reads
 * as text.
 */
const QUOTED_CONTINUATIONS: readonly Difference[] = [
  { attack: 'cat <<EOF\n$\\\n(touch pwned)\nEOF', control: 'cat <<EOF\nx \\\n$(ls x)\nEOF' },
  {
    attack: 'cat <<EOF\n$\\\n\\\n(touch pwned)\nEOF',
    control: "cat <<'EOF'\n$\\\n(touch pwned)\nEOF",
  },
  {
    attack: "x='$(touch pwned)'; cat <<EOF\n$\\\n{x@P}\nEOF",
    control: "x='$(ls x)'; cat <<EOF\n${x}\nEOF",
  },
  { attack: 'echo "$\\\n(touch pwned)"', control: 'echo "a\\\nb $(ls x)"' },
  { attack: 'echo $"$\\\n(touch pwned)"', control: "ls '$\\\n(touch pwned)'" },
  { attack: 'echo $(echo "$\\\n(touch pwned)")', control: 'ls "$(echo "\\$\\\n(touch pwned)")"' },
]

/**
 * A process substitution in the word of an unquoted `${…}`: bash runs it, the grammar reads
 * text. Quoted (`"${x:-<(…)}"`) bash does not run it either, but it is refused alike.
 */
const EXPANSION_PROCESS_SUBSTITUTIONS: readonly Difference[] = [
  // `wait $!` waits for the process substitution (bash 5.1), so the trace holds its command.
  { attack: 'ls ${x:-<(touch pwned)}; wait $!', control: 'f=<(ls x); ls "${x:-$f}"' },
  { attack: 'x=abc; ls ${x/a/>(touch pwned)}; wait $!', control: 'x=abc; ls ${x/a/b} >(ls x)' },
  { attack: 'x=abc; ls ${x:+a <(touch pwned)}; wait $!', control: 'x=abc; ls ${x:+a} <(ls x)' },
  { attack: 'ls ${x=<(touch pwned)}; wait $!', control: "ls ${x-'<(touch pwned)'}" },
]

describe('parser differences, against real bash', () => {
  let policy: CommandPolicy
  let parser: Parser
  let scratch: string
  let emptyPath: string
  before(async () => {
    policy = await CommandPolicy.load()
    parser = await loadBashParser()
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-parser-differences-'))
    emptyPath = path.join(scratch, 'empty-path')
    await fs.mkdir(emptyPath)
  })
  after(async () => {
    policy.close()
    parser.delete()
    await fs.rm(scratch, { recursive: true, force: true })
  })

  let count = 0
  async function folder(): Promise<string> {
    count += 1
    const dir = path.join(scratch, String(count))
    await fs.mkdir(dir)
    return dir
  }

  /** The words of every command bash would run for `source` (builtins aside). */
  async function bashRuns(source: string): Promise<string[][]> {
    const dir = await folder()
    const trace = path.join(dir, '.trace')
    const setup = path.join(dir, '.setup')
    // One printf per command, so that the stages of a pipeline do not interleave their words;
    // each record ends with a \x01 word.
    await fs.writeFile(
      setup,
      `exec 9>>'${trace}'\ncommand_not_found_handle() { printf '%s\\0' "$@" $'\\x01' >&9; return 127; }\n`,
    )
    const env = { PATH: emptyPath, HOME: dir, BASH_ENV: setup }
    await runQuietly('/bin/bash', ['-c', source], { cwd: dir, env })
    const text = await fs.readFile(trace, 'utf8').catch(() => '')
    return text
      .split('\x01\0')
      .filter((record) => record !== '')
      .map((record) => record.slice(0, -1).split('\0'))
  }

  /** The names of the commands in the grammar's own tree: what a policy without checks sees. */
  function grammarNames(source: string): string[] {
    const tree = parser.parse(source)
    assert.ok(tree !== null)
    const names: string[] = []
    const visit = (node: Node): void => {
      if (node.type === 'command') names.push(node.childForFieldName('name')?.text ?? '')
      for (const child of node.namedChildren) visit(child)
    }
    visit(tree.rootNode)
    tree.delete()
    return names
  }

  /** The words of the commands the policy read; a word known only at run time as undefined. */
  function policySaw(source: string): Array<Array<string | undefined>> {
    const parsed = parseShell(parser, source)
    assert.equal(parsed.type, 'parsed', parsed.type === 'parsed' ? '' : parsed.message)
    if (parsed.type !== 'parsed') return []
    return parsed.units.flatMap((unit) =>
      unit.type === 'command'
        ? [unit.command.words.map((word) => (word.glob ? undefined : word.value))]
        : [],
    )
  }

  /** Every command bash runs for `source` is one the policy saw, word for word. */
  async function assertRunsWhatPolicySaw(source: string, runsSome = true): Promise<void> {
    const saw = policySaw(source)
    const ran = await bashRuns(source)
    if (runsSome) assert.ok(ran.length > 0, `bash ran no command for ${JSON.stringify(source)}`)
    for (const words of ran) {
      const seen = saw.some(
        (seenWords) =>
          seenWords.length === words.length &&
          seenWords.every((word, index) => word === undefined || word === words[index]),
      )
      assert.ok(
        seen,
        `bash ran ${JSON.stringify(words)} for ${JSON.stringify(source)}; the policy saw ${JSON.stringify(saw)}`,
      )
    }
  }

  function checkDifferences(name: string, differences: readonly Difference[]): void {
    describe(name, () => {
      for (const { attack, rule = 'ambiguous-syntax', control } of differences) {
        it(`refuses ${JSON.stringify(attack)}; allows ${JSON.stringify(control)}`, async () => {
          const ran = await bashRuns(attack)
          assert.ok(
            ran.some((words) => words.join(' ') === 'touch pwned'),
            `bash did not run touch pwned: ${JSON.stringify(ran)}`,
          )
          assert.ok(
            !grammarNames(attack).includes('touch'),
            `the grammar alone sees the command: ${JSON.stringify(attack)}`,
          )
          const judged = policy.judge(attack)
          assert.equal(judged.verdict, 'deny', judged.reason)
          assert.equal(judged.rule, rule, judged.reason)

          await assertRunsWhatPolicySaw(control)
          const controlled = policy.judge(control)
          assert.equal(controlled.verdict, 'allow', `${control}: ${controlled.reason}`)
        })
      }
    })
  }

  checkDifferences('here-document delimiters', HEREDOCS)
  checkDifferences('here-document lines that start with blanks', HEREDOC_BODIES)
  checkDifferences('here-documents whose first line is a backslash', HEREDOC_FIRST_LINES)
  checkDifferences('blanks bash does not split at', BLANKS)
  checkDifferences('quotes inside ${…}', EXPANSIONS)
  checkDifferences('line continuations after a $ in quoted text', QUOTED_CONTINUATIONS)
  checkDifferences('process substitutions inside ${…}', EXPANSION_PROCESS_SUBSTITUTIONS)

  it('refuses Unicode spaces and control characters outside quotes, and reads them inside', async () => {
    // The grammar happens to read these as bash does today; they are refused as a precaution.
    for (const blank of ['\u00a0', '\u2003', '\u3000', '\u200b', '\x1c', '\0']) {
      const judged = policy.judge(`ls${blank}x`)
      assert.equal(judged.verdict, 'deny', JSON.stringify(blank))
      assert.equal(judged.rule, 'ambiguous-syntax', judged.reason)
      if (blank === '\0') continue
      const control = `ls '${blank}' "a${blank}b" $'${blank}'`
      await assertRunsWhatPolicySaw(control)
      assert.equal(policy.judge(control).verdict, 'allow', JSON.stringify(control))
    }
  })

  it('reads $"…" as bash does: the string without the $', async () => {
    for (const source of ['ls $"a b"', 'ls x$"y"z', 'ls $"a"$"b" "c"$"d"', 'ls $"/"'])
      await assertRunsWhatPolicySaw(source)
    assert.deepEqual(await bashRuns('rm -rf $"/"'), [['rm', '-rf', '/']])
    const judged = policy.judge('rm -rf $"/"')
    assert.equal(judged.verdict, 'deny', judged.reason)
    assert.equal(judged.rule, 'system-delete', judged.reason)
    assert.equal(policy.judge('grep -n $"todo" notes.txt').verdict, 'allow')
  })

  it('reads ordinary commands as bash does, and still allows them', async () => {
    const ordinary = [
      'git status',
      'ls -la',
      'cat <<EOF\nhello $HOME\nEOF\nls',
      "cat <<'EOF' | grep -n x\nx `y` $z\nEOF",
      'cat <<-EOF\n\tindented\n\tEOF',
      'ls 2>&1 | head -n 5',
      'ls > /dev/null 2>&1; git log --oneline -n 3',
      'grep -n "naïve 👨‍👩‍👧 ✓" notes.txt',
      'ls -la \\\n  src \\\n  test',
      'x=src; ls "${x}/a" "${x:-.}" ${x%/*} "${x##*/}"',
      'ls "a#b" c#d # comment',
      'grep -rn "TODO" src | head',
    ]
    for (const source of ordinary) {
      await assertRunsWhatPolicySaw(source)
      const judged = policy.judge(source)
      assert.equal(judged.verdict, 'allow', `${source}: ${judged.reason}`)
    }
  })

  it('agrees with bash on every command it allows among variants of ${…}', async () => {
    // A small sweep: for each operator and quoting, the variants the policy allows must run
    // in bash exactly the commands it saw; the rest must be refused, never read another way.
    const operators = [':-', '+', '#', '%%', '/', '//', '/#', '^^', ',']
    const tails = [`'}'}`, `'/'}`, `"a b"}`, `'$(touch pwned)'}`, `\\'}`, `\\/}`]
    let allowed = 0
    for (const operator of operators) {
      for (const tail of tails) {
        for (const word of [`\${x${operator}${tail}`, `"\${x${operator}${tail}"`]) {
          const source = `x=abc; cat ${word} ; touch pwned #'}"`
          const judged = policy.judge(source)
          if (judged.verdict === 'allow') {
            allowed += 1
            await assertRunsWhatPolicySaw(source, false)
          } else if (judged.rule !== 'ambiguous-syntax' && judged.rule !== 'unparseable') {
            // Read alike: bash runs what the policy saw, here including touch (not read-only).
            await assertRunsWhatPolicySaw(source, false)
          }
        }
      }
    }
    assert.ok(allowed === 0, 'no variant with touch pwned after it can be allow')
  })
})
