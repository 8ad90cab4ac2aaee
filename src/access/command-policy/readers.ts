/**
 * @module access/command-policy/readers
 * The closed list of programs that may run without a question, each with every option known to
 * only read. Options are written as in option-table.ts; the tables follow the programs of
 * Debian 12 (coreutils 9.1, grep 3.8, diffutils 3.8, file 5.44, jq 1.6, ripgrep 13, tree 2.1).
 * An option that is not listed, is abbreviated, or is only known at run time keeps a command
 * out of `allow`: a short list that is right beats a long one that leaks.
 */
import { optionTable } from './option-table.ts'
import type { OptionDefinition } from './scan-options.ts'

/** How one program may be called and still only read. */
export interface ReaderDefinition {
  /** Every option known to only read. */
  readonly reads: readonly OptionDefinition[]
  /** Options known to write a file or run a program; named in the reason. */
  readonly writes?: readonly OptionDefinition[]
  /** Options (by name) whose value is a program the reader runs on each file. */
  readonly runs?: readonly string[]
  /**
   * No option of the program writes a file or runs a program, so a word only known at run time
   * (`cat "$f"`) may stand where an option could. Literal options must still be listed.
   */
  readonly harmlessOptions?: boolean
  /** Every argument is harmless, options or not (`echo`, `true`, `cd`). */
  readonly anyArguments?: boolean
  /** `-5` is an option (`head -5`, `grep -3`). */
  readonly numericOptions?: boolean
  /** Operands past this many are a file it writes (`uniq in out`). */
  readonly maxOperands?: number
  /** Operands must start with this (`date +%s`; any other operand sets the clock). */
  readonly operandPrefix?: string
}

const HELP = 'help version'

/** Only reads whatever its options: the table is still closed for literal options. */
function harmless(spec: string, numericOptions = false): ReaderDefinition {
  return { reads: optionTable(`${spec} ${HELP}`), harmlessOptions: true, numericOptions }
}

const GREP = harmless(
  [
    'E|extended-regexp F|fixed-strings G|basic-regexp P|perl-regexp e|regexp= f|file=',
    'i|ignore-case no-ignore-case y w|word-regexp x|line-regexp z|null-data s|no-messages',
    'v|invert-match V m|max-count= b|byte-offset n|line-number line-buffered H|with-filename',
    'h|no-filename label= o|only-matching q|quiet silent binary-files= a|text I',
    'd|directories= D|devices= r|recursive R|dereference-recursive include= exclude=',
    'exclude-from= exclude-dir= L|files-without-match l|files-with-matches c|count',
    'T|initial-tab Z|null B|before-context= A|after-context= C|context= group-separator=',
    'no-group-separator color? colour? U|binary',
  ].join(' '),
  true,
)

/** Builtins and programs whose arguments never make them write or run anything. */
const ANY_ARGUMENTS: ReaderDefinition = { reads: [], anyArguments: true }

/** Every program that may run without a question, by name. */
export const READERS: Readonly<Record<string, ReaderDefinition>> = {
  cat: harmless(
    'A|show-all b|number-nonblank e E|show-ends n|number s|squeeze-blank t T|show-tabs u v|show-nonprinting',
  ),
  ls: harmless(
    [
      'a|all A|almost-all author b|escape block-size= B|ignore-backups c C color? d|directory',
      'D|dired f F|classify? file-type format= full-time g group-directories-first',
      'G|no-group h|human-readable si H|dereference-command-line',
      'dereference-command-line-symlink-to-dir hide= hyperlink? indicator-style= i|inode',
      'I|ignore= k|kibibytes l L|dereference m n|numeric-uid-gid N|literal o p',
      'q|hide-control-chars show-control-chars Q|quote-name quoting-style= r|reverse',
      'R|recursive s|size S sort= time= time-style= t T|tabsize= u U v w|width= x X',
      'Z|context zero 1',
    ].join(' '),
  ),
  grep: GREP,
  egrep: GREP,
  fgrep: GREP,
  head: harmless('c|bytes= n|lines= q|quiet silent v|verbose z|zero-terminated', true),
  // Following a file (`-f`, `-F`, `--follow`, `--retry`, `--pid`) never ends: not listed.
  tail: harmless(
    'c|bytes= n|lines= q|quiet silent v|verbose z|zero-terminated s|sleep-interval= max-unchanged-stats=',
    true,
  ),
  wc: harmless('c|bytes m|chars l|lines files0-from= L|max-line-length w|words'),
  cut: harmless(
    'b|bytes= c|characters= d|delimiter= f|fields= n complement s|only-delimited output-delimiter= z|zero-terminated',
  ),
  tr: harmless('c C complement d|delete s|squeeze-repeats t|truncate-set1'),
  stat: harmless('L|dereference f|file-system cached= c= format= printf= t|terse'),
  realpath: harmless(
    'e|canonicalize-existing m|canonicalize-missing L|logical P|physical q|quiet relative-to= relative-base= s|strip no-symlinks z|zero',
  ),
  readlink: harmless(
    'f|canonicalize e|canonicalize-existing m|canonicalize-missing n|no-newline q|quiet s|silent v|verbose z|zero',
  ),
  basename: harmless('a|multiple s|suffix= z|zero'),
  dirname: harmless('z|zero'),
  seq: harmless('f|format= s|separator= w|equal-width', true),
  nl: harmless(
    'b|body-numbering= d|section-delimiter= f|footer-numbering= h|header-numbering= i|line-increment= l|join-blank-lines= n|number-format= p|no-renumber s|number-separator= v|starting-line-number= w|number-width=',
  ),
  rev: harmless(''),
  tac: harmless('b|before r|regex s|separator='),
  cmp: harmless('b|print-bytes i|ignore-initial= l|verbose n|bytes= s|quiet silent'),
  comm: harmless('1 2 3 check-order nocheck-order output-delimiter= total z|zero-terminated'),
  du: harmless(
    [
      '0|null a|all apparent-size B|block-size= b|bytes c|total D|dereference-args d|max-depth=',
      'files0-from= H h|human-readable inodes k L|dereference l|count-links m P|no-dereference',
      'S|separate-dirs si s|summarize t|threshold= time? time-style= X|exclude-from= exclude=',
      'x|one-file-system',
    ].join(' '),
  ),
  id: harmless('a Z|context g|group G|groups n|name r|real u|user z|zero'),
  uname: harmless(
    'a|all s|kernel-name n|nodename r|kernel-release v|kernel-version m|machine p|processor i|hardware-platform o|operating-system',
  ),
  whoami: harmless(''),
  printenv: harmless('0|null'),
  pwd: harmless('L P'),
  which: harmless('a s'),
  type: harmless('a f p P t'),
  // `command -v x` and `env` without a command only print; with one, they are seen through.
  command: harmless('p v V'),
  env: harmless(
    'i|ignore-environment 0|null u|unset= C|chdir= v|debug block-signal? default-signal? ignore-signal? list-signal-handling',
  ),
  // jq has no option that writes or runs anything; `--arg NAME VALUE` takes two words, and the
  // second is read as an operand, which only makes the table stricter.
  jq: harmless(
    [
      'c|compact-output n|null-input e|exit-status s|slurp r|raw-output j|join-output',
      'R|raw-input C|color-output M|monochrome-output S|sort-keys a|ascii-output tab indent=',
      'arg= argjson= slurpfile= rawfile= args jsonargs seq stream f|from-file L= unbuffered h',
    ].join(' '),
  ),
  echo: ANY_ARGUMENTS,
  true: ANY_ARGUMENTS,
  false: ANY_ARGUMENTS,
  ':': ANY_ARGUMENTS,
  cd: ANY_ARGUMENTS,
  pushd: ANY_ARGUMENTS,
  popd: ANY_ARGUMENTS,
  dirs: ANY_ARGUMENTS,
  diff: {
    reads: optionTable(
      [
        'normal q|brief s|report-identical-files c C= context? u U= unified? e|ed n|rcs',
        'y|side-by-side W|width= left-column suppress-common-lines p|show-c-function',
        'F|show-function-line= label= t|expand-tabs T|initial-tab tabsize= suppress-blank-empty',
        'r|recursive no-dereference N|new-file unidirectional-new-file ignore-file-name-case',
        'no-ignore-file-name-case x|exclude= X|exclude-from= S|starting-file= from-file=',
        'to-file= i|ignore-case E|ignore-tab-expansion Z|ignore-trailing-space',
        'b|ignore-space-change w|ignore-all-space B|ignore-blank-lines I|ignore-matching-lines=',
        'a|text strip-trailing-cr D|ifdef= line-format= d|minimal horizon-lines=',
        'speed-large-files color? palette= help v|version',
      ].join(' '),
    ),
    // `-l` pipes the output through `pr`.
    writes: optionTable('l|paginate'),
  },
  sort: {
    reads: optionTable(
      [
        'b|ignore-leading-blanks d|dictionary-order f|ignore-case g|general-numeric-sort',
        'i|ignore-nonprinting M|month-sort h|human-numeric-sort n|numeric-sort R|random-sort',
        'random-source= r|reverse sort= V|version-sort batch-size= c check? C debug files0-from=',
        'k|key= m|merge s|stable S|buffer-size= t|field-separator= parallel= u|unique',
        `z|zero-terminated ${HELP}`,
      ].join(' '),
    ),
    writes: optionTable('o|output= compress-program= T|temporary-directory='),
    runs: ['compress-program'],
  },
  uniq: {
    reads: optionTable(
      `c|count d|repeated D all-repeated? f|skip-fields= group? i|ignore-case s|skip-chars= u|unique z|zero-terminated w|check-chars= ${HELP}`,
    ),
    maxOperands: 1,
  },
  date: {
    reads: optionTable(
      `d|date= debug f|file= I? iso-8601? resolution R|rfc-email rfc-3339= r|reference= u|utc universal ${HELP}`,
    ),
    writes: optionTable('s|set='),
    operandPrefix: '+',
  },
  file: {
    reads: optionTable(
      [
        'm|magic-file= b|brief c|checking-printout e|exclude= exclude-quiet= f|files-from=',
        'F|separator= i|mime apple extension mime-type mime-encoding k|keep-going l|list',
        'L|dereference h|no-dereference n|no-buffer N|no-pad 0|print0 P|parameter= r|raw',
        's|special-files d|debug help v|version',
      ].join(' '),
    ),
    // Decompressing can run decompressors; `-p` sets access times; `-S` drops its sandbox.
    writes: optionTable(
      'C|compile z|uncompress Z|uncompress-noreport p|preserve-date S|no-sandbox',
    ),
  },
  // tree takes the value of `-L`, `-P` and `-I` from the next word even inside a bundle
  // (`-Lo 2 out` writes `out`), so they are read here as flags: their values become operands.
  tree: {
    reads: optionTable(
      [
        'a d l f x L P I gitignore ignore-case matchdirs prune noreport i q N Q p u g s h si du',
        'D F v t c U r dirsfirst n C J X charset? filelimit? help version',
      ].join(' '),
    ),
    writes: optionTable('o H R fromfile'),
  },
  rg: {
    reads: optionTable(
      [
        'n|line-number N|no-line-number i|ignore-case S|smart-case s|case-sensitive',
        'w|word-regexp x|line-regexp F|fixed-strings e|regexp= f|file= g|glob= iglob= t|type=',
        'T|type-not= l|files-with-matches files-without-match c|count count-matches',
        'o|only-matching v|invert-match A|after-context= B|before-context= C|context=',
        'm|max-count= max-depth= hidden no-hidden no-ignore no-ignore-vcs no-ignore-dot',
        'no-ignore-parent no-ignore-global u|unrestricted L|follow no-follow files json color=',
        'colors= no-heading heading H|with-filename I|no-filename vimgrep U|multiline',
        'multiline-dotall P|pcre2 column no-column r|replace= q|quiet stats sort= sortr=',
        'M|max-columns= max-columns-preview trim 0|null type-list p|pretty a|text b|byte-offset',
        'j|threads= no-messages passthru no-config E|encoding= h|help V|version',
      ].join(' '),
    ),
    // `--pre` and `--hostname-bin` run a program; `-z` runs decompressors.
    writes: optionTable('pre= pre-glob= hostname-bin= z|search-zip'),
    runs: ['pre', 'hostname-bin'],
  },
}
