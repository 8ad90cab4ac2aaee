import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isDiskDevice, pathDanger } from './dangerous-paths.ts'
import { dynamicWord, literalWord, type ShellWord } from './shell-syntax.ts'

function glob(pattern: string): ShellWord {
  return { ...literalWord(pattern), glob: true, pattern }
}

describe('pathDanger', () => {
  it('reads literal paths from the workspace root, `..` included', () => {
    const cases: [string, ReturnType<typeof pathDanger>][] = [
      ['/', 'system'],
      ['//', 'system'],
      ['/etc', 'system'],
      ['/etc/', 'system'],
      ['/usr/local/lib', 'system'],
      ['/var', 'system'],
      ['/var/tmp/build', undefined],
      ['/home', 'system'],
      ['/home/alice', 'home'],
      ['/home/alice/project/dist', undefined],
      ['~', 'home'],
      ['~/', 'home'],
      ['~/.', 'home'],
      ['~/project', undefined],
      ['~/..', 'system'],
      ['.', 'workspace'],
      ['./', 'workspace'],
      ['src/..', 'workspace'],
      ['/workspace/', 'workspace'],
      ['.git', 'workspace'],
      ['..', 'system'],
      ['../etc', 'system'],
      ['build', undefined],
      ['/tmp/x', undefined],
    ]
    for (const [path, danger] of cases) assert.equal(pathDanger(literalWord(path)), danger, path)
  })

  it('judges a glob by everything it could match', () => {
    const cases: [string, ReturnType<typeof pathDanger>][] = [
      ['/*', 'system'],
      ['/u?r', 'system'],
      ['/[e]tc', 'system'],
      ['/{tmp/x,etc}', 'system'],
      ['{/tmp/x,/etc}', 'system'],
      ['/usr/*.txt', 'system'],
      ['/var/*', 'system'],
      ['/var/log/*.gz', undefined],
      ['~/*', 'home'],
      ['~/.*', 'home'],
      ['*', 'workspace'],
      ['.*', 'workspace'],
      ['./*', 'workspace'],
      ['*.log', undefined],
      ['src/*', undefined],
      ['/tmp/*', undefined],
    ]
    for (const [pattern, danger] of cases) assert.equal(pathDanger(glob(pattern)), danger, pattern)
  })

  it('judges a path known only at run time by the worst it could become', () => {
    const cases: [string, ReturnType<typeof pathDanger>][] = [
      ['', 'unknown'],
      ['/', 'system'],
      ['/e', 'system'],
      ['/etc/', 'system'],
      ['/usr/lib/', 'system'],
      ['/home/', 'system'],
      ['~', 'home'],
      ['~/', 'home'],
      ['~/build/', 'unknown'],
      ['/tmp/', 'unknown'],
      ['./', 'unknown'],
      ['build', 'unknown'],
    ]
    for (const [prefix, danger] of cases)
      assert.equal(pathDanger(dynamicWord(`${prefix}$X`, prefix)), danger, prefix)
  })
})

describe('isDiskDevice', () => {
  it('knows disks and memory from other devices', () => {
    for (const path of ['/dev/sda', '/dev/sdb1', '/dev/nvme0n1', '/dev/mmcblk0p2', '/dev/mem'])
      assert.equal(isDiskDevice(path), true, path)
    for (const path of ['/dev/null', '/dev/stdout', '/dev/tty', '/dev/shm/x', 'sda'])
      assert.equal(isDiskDevice(path), false, path)
  })
})
