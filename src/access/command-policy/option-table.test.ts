import assert from 'node:assert/strict'
import { it } from 'node:test'
import { optionTable } from './option-table.ts'

it('reads a table of short and long options, flags and values', () => {
  assert.deepEqual(optionTable(' n|lines=  color? l all I= '), [
    { name: 'lines', short: 'n', long: 'lines', value: 'required' },
    { name: 'color', long: 'color', value: 'attached' },
    { name: 'l', short: 'l' },
    { name: 'all', long: 'all' },
    { name: 'I', short: 'I', value: 'required' },
  ])
})
