/**
 * @module workspace/git/object-format
 * The hash a repository names its objects with: SHA-1 (40 hex digits) unless its configuration
 * says `extensions.objectFormat = sha256` (64). Read with git's own configuration parser.
 */
import { parseListing } from './git-config-file.ts'
import { runGit } from './run-git.ts'

/** The object formats git knows. */
export type ObjectFormat = 'sha1' | 'sha256'

/** Hex digits of an object id in each format. */
export const OBJECT_ID_HEX_LENGTH: Readonly<Record<ObjectFormat, number>> = Object.freeze({
  sha1: 40,
  sha256: 64,
})

/** git reads its configuration in well under this; a stuck one is not waited for. */
const CONFIG_TIMEOUT_MS = 10_000

/**
 * The object format a repository configuration names, from its bytes (undefined: no file, so
 * SHA-1). git itself parses the text (`git config --file -`, which only reads); the last
 * `extensions.objectformat` wins, as in git. A configuration git cannot parse leaves the
 * repository unusable anyway, and counts as SHA-1.
 */
export async function objectFormatOf(config: Uint8Array | undefined): Promise<ObjectFormat> {
  // A key cannot be escaped or continued across lines: without its name, it is not set.
  if (config === undefined || !/objectformat/i.test(Buffer.from(config).toString('latin1'))) {
    return 'sha1'
  }
  const output = await runGit(
    { gitDir: '/nonexistent' },
    ['config', '--file', '-', '--list', '--null', '--no-includes'],
    { input: Buffer.from(config), check: false, timeoutMs: CONFIG_TIMEOUT_MS },
  )
  if (output.status !== 0) return 'sha1'
  const values = parseListing(output.stdout.toString('utf8'))
    .filter((entry) => entry.key === 'extensions.objectformat')
    .map((entry) => entry.value)
  return values.at(-1) === 'sha256' ? 'sha256' : 'sha1'
}
