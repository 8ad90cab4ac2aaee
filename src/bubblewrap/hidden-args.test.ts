import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { hideOptions, optionsData } from './hidden-args.ts'

describe('hideOptions', () => {
  it('sends every option through fd 3 and keeps only the command on the command line', () => {
    const hidden = hideOptions([
      '--unshare-all',
      '--setenv',
      'A',
      '--',
      '--bind',
      '/tmp/eitri-x/points/job-1',
      '/workspace',
      '--size',
      '1024',
      '--tmpfs',
      '/tmp',
      '--',
      'sh',
      '-c',
      'echo --bind',
    ])
    // An option's value that reads like `--` is the value, not the end of the options.
    assert.deepEqual(hidden.options.slice(0, 4), ['--unshare-all', '--setenv', 'A', '--'])
    assert.equal(hidden.options.length, 11)
    assert.deepEqual(hidden.argv, ['--args', '3', '--', 'sh', '-c', 'echo --bind'])
    assert.equal(optionsData(['--proc', '/proc']), '--proc\0/proc\0')
  })

  it('leaves arguments with no bubblewrap option as they are', () => {
    assert.deepEqual(hideOptions(['echo', '--bind']), { options: [], argv: ['echo', '--bind'] })
    // A NUL would smuggle a word in on the descriptor; left on the command line, it fails the start.
    const smuggled = ['--setenv', 'A', 'x\0--bind\0/\0/host', '--', 'true']
    assert.deepEqual(hideOptions(smuggled), { options: [], argv: smuggled })
  })
})
