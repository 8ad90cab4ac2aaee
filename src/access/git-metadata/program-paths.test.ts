import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { namesProgram, programPathsOf } from './program-paths.ts'

const place = { file: '/w/.git/config', workTree: '/w', home: '/home/me' }

describe('programPathsOf: what a configuration names as code', () => {
  const cases: [key: string, value: string, expected: string | undefined][] = [
    ['core.hookspath', '.husky', '/w/.husky/'],
    ['core.hookspath', '/w/tools/hooks', '/w/tools/hooks/'],
    ['core.hookspath', '~/hooks', '/home/me/hooks/'],
    ['core.fsmonitor', 'scripts/fsmonitor.sh', '/w/scripts/fsmonitor.sh'],
    ['core.fsmonitor', 'true', undefined],
    ['core.fsmonitor', 'false', undefined],
    ['core.pager', 'less -R', undefined],
    ['core.pager', './bin/pager --x', '/w/bin/pager'],
    ['core.sshcommand', '"tools/my ssh" -v', '/w/tools/my ssh'],
    ['core.editor', "'ed itor/run' x", '/w/ed itor/run'],
    ['sequence.editor', 'scripts/edit', '/w/scripts/edit'],
    ['alias.st', '!scripts/st.sh --short', '/w/scripts/st.sh'],
    ['alias.st', 'status --short', undefined],
    ['filter.lfs.clean', 'tools/clean %f', '/w/tools/clean'],
    ['filter.lfs.process', 'tools/filter-process', '/w/tools/filter-process'],
    ['diff.img.textconv', 'bin/img2txt', '/w/bin/img2txt'],
    ['merge.ours.driver', 'bin/merge %O %A %B', '/w/bin/merge'],
    ['credential.helper', 'bin/cred', '/w/bin/cred'],
    ['credential.https://example.com.helper', 'bin/cred2', '/w/bin/cred2'],
    ['gpg.ssh.program', 'bin/sign', '/w/bin/sign'],
    ['pager.log', 'bin/pager', '/w/bin/pager'],
    ['difftool.mine.path', 'bin/difftool', '/w/bin/difftool'],
    ['submodule.x.update', '!bin/update', '/w/bin/update'],
    ['submodule.x.update', 'rebase', undefined],
    ['user.name', 'a/b', undefined],
    ['core.hookspath', '~other/hooks', undefined],
  ]
  for (const [key, value, expected] of cases) {
    it(`${key} = ${value}`, () => {
      const { programs } = programPathsOf([{ key, value }], place)
      const found = programs.map((program) => `${program.hostPath}${program.folder ? '/' : ''}`)
      assert.deepEqual(found, expected === undefined ? [] : [expected])
    })
  }

  it('follows includes relative to the including file, conditional ones too', () => {
    const named = programPathsOf(
      [
        { key: 'include.path', value: '../shared.gitconfig' },
        { key: 'includeif.gitdir:/w/.path', value: 'extra.gitconfig' },
        { key: 'core.bare', value: undefined },
      ],
      place,
    )
    assert.deepEqual(named.includes, ['/w/shared.gitconfig', '/w/.git/extra.gitconfig'])
    assert.deepEqual(
      named.programs.map((program) => program.hostPath),
      ['/w/shared.gitconfig', '/w/.git/extra.gitconfig'],
    )
  })
})

describe('programPathsOf: every word that names a path, keys matched by their ending', () => {
  const cases: [key: string, value: string, expected: string[]][] = [
    ['core.fsmonitor', 'sh scripts/fsmon.sh', ['/w/scripts/fsmon.sh']],
    ['core.fsmonitor', 'VAR=1 ./x', ['/w/x']],
    ['alias.f', '!f(){ ./x; };f', ['/w/x']],
    ['core.editor', 'python3 tools/x.py --wait', ['/w/tools/x.py']],
    ['core.pager', 'less -R', []],
    ['gpg.ssh.defaultkeycommand', './scripts/key.sh', ['/w/scripts/key.sh']],
    ['imap.tunnel', './scripts/tun.sh', ['/w/scripts/tun.sh']],
    ['sendemail.sendmailcmd', 'bin/send -t', ['/w/bin/send']],
    ['init.templatedir', '~/.git-templates', ['/home/me/.git-templates/']],
    ['user.signingkey', 'keys/a.pub', []],
    // husky 9: the stubs in `_` run the scripts in the folder above.
    ['core.hookspath', '.husky/_', ['/w/.husky/_/', '/w/.husky/']],
    ['core.hookspath', 'tools/hooks/_', ['/w/tools/hooks/_/', '/w/tools/hooks/']],
    ['core.hookspath', 'tools/_hooks', ['/w/tools/_hooks/']],
  ]
  for (const [key, value, expected] of cases) {
    it(`${key} = ${value}`, () => {
      const { programs } = programPathsOf([{ key, value }], place)
      assert.deepEqual(
        programs.map((program) => `${program.hostPath}${program.folder ? '/' : ''}`),
        expected,
      )
    })
  }
})

describe('namesProgram: whether a key names a program, whatever its value names', () => {
  const cases: [key: string, value: string | undefined, expected: boolean][] = [
    ['user.email', 'a@example.org', false],
    ['user.name', 'agent', false],
    ['core.fsmonitor', 'sh -c x', true],
    ['core.fsMonitor', 'x', true],
    ['core.fsmonitor', 'false', false],
    ['alias.st', '!echo x', true],
    ['alias.st', 'status --short', false],
    ['diff.x.textconv', 'cat', true],
    ['filter.x.smudge', 'cat', true],
    ['core.hooksPath', '/dev/null', true],
    ['include.path', '../x.cfg', true],
    ['includeIf.gitdir:/x/.path', 'x.cfg', true],
    ['core.pager', 'less', true],
    ['branch.main.remote', 'origin', false],
    ['core.bare', undefined, false],
    // `git log` verifies signatures with gpg, which runs what its own configuration names.
    ['log.showsignature', 'true', true],
    ['log.showSignature', undefined, true],
    ['log.showsignature', '1', true],
    ['log.showsignature', 'false', false],
    ['log.showsignature', 'Off', false],
    ['format.pretty', '%h %G?', true],
    ['pretty.signed', 'format:%GS', true],
    ['format.pretty', 'oneline', false],
    ['pretty.short', 'format:%h %s', false],
  ]
  for (const [key, value, expected] of cases) {
    it(`${key} = ${value ?? '(no value)'}`, () => assert.equal(namesProgram(key, value), expected))
  }
})
