/**
 * @module access/command-policy/option-table
 * A compact way to write down a program's options, and what a word could be when the program
 * reads it. Tables are written as one string, a token per option:
 *
 * - `n|lines=`: `-n` and `--lines`, taking a value (attached or in the next word);
 * - `color?`: `--color`, with an optional value that must be attached (`--color=auto`);
 * - `l`: the flag `-l`; `all`: the flag `--all`; `I=`: `-I` with a value.
 *
 * A token of one character is a short option, a longer one a long option.
 */
import type { OptionDefinition } from './scan-options.ts'

/**
 * The option definitions `spec` describes (see the module comment).
 *
 * @example
 * optionTable('n|lines= q|quiet color?')
 * // [{ name: 'lines', short: 'n', long: 'lines', value: 'required' }, { name: 'quiet', … }, …]
 */
export function optionTable(spec: string): OptionDefinition[] {
  return spec
    .split(/\s+/)
    .filter((token) => token !== '')
    .map((token) => {
      const marker = token.at(-1)
      const value = marker === '=' ? 'required' : marker === '?' ? 'attached' : undefined
      const names = (value === undefined ? token : token.slice(0, -1)).split('|')
      const short = names.find((name) => name.length === 1)
      const long = names.find((name) => name.length > 1)
      const definition: OptionDefinition = {
        name: long ?? short ?? token,
        ...(short === undefined ? {} : { short }),
        ...(long === undefined ? {} : { long }),
        ...(value === undefined ? {} : { value }),
      }
      return definition
    })
}
