import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { readEnvironment } from './environment.ts'
import { workspaceStateDir } from './state-dir.ts'

describe('readEnvironment', () => {
  it('defaults to the XDG folders under HOME', () => {
    assert.deepEqual(readEnvironment({ HOME: '/home/ada' }), {
      stateDir: '/home/ada/.local/state/eitri',
      configPath: '/home/ada/.config/eitri/config.json',
      token: undefined,
      home: '/home/ada',
      gitConfigs: ['/home/ada/.config/git/config', '/home/ada/.gitconfig', '/etc/gitconfig'],
    })
  })

  it('finds the git configuration files as git does', () => {
    assert.deepEqual(
      readEnvironment({ HOME: '/h', XDG_CONFIG_HOME: '/x', GIT_CONFIG_SYSTEM: '/s/gitconfig' })
        .gitConfigs,
      ['/x/git/config', '/h/.gitconfig', '/s/gitconfig'],
    )
    assert.deepEqual(
      readEnvironment({ HOME: '/h', GIT_CONFIG_GLOBAL: '/g/config', GIT_CONFIG_NOSYSTEM: '1' })
        .gitConfigs,
      ['/g/config'],
    )
    assert.deepEqual(
      readEnvironment({ HOME: '/h', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' })
        .gitConfigs,
      [],
    )
  })

  it('follows XDG_STATE_HOME and XDG_CONFIG_HOME', () => {
    const environment = readEnvironment({
      HOME: '/home/ada',
      XDG_STATE_HOME: '/xdg/state',
      XDG_CONFIG_HOME: '/xdg/config',
    })
    assert.equal(environment.stateDir, '/xdg/state/eitri')
    assert.equal(environment.configPath, '/xdg/config/eitri/config.json')
  })

  it('reads EITRI_WASM_TIER_UP=1 only', () => {
    assert.equal(readEnvironment({ HOME: '/h', EITRI_WASM_TIER_UP: '1' }).wasmTierUp, true)
    assert.equal(readEnvironment({ HOME: '/h', EITRI_WASM_TIER_UP: 'yes' }).wasmTierUp, undefined)
  })

  it('lets EITRI_STATE_DIR, EITRI_CONFIG and EITRI_TOKEN win, and ignores empty values', () => {
    const environment = readEnvironment({
      HOME: '/home/ada',
      XDG_STATE_HOME: '/xdg/state',
      EITRI_STATE_DIR: '/srv/eitri',
      EITRI_CONFIG: '/etc/eitri.json',
      EITRI_TOKEN: 'abc',
    })
    assert.deepEqual(
      {
        stateDir: environment.stateDir,
        configPath: environment.configPath,
        token: environment.token,
      },
      { stateDir: '/srv/eitri', configPath: '/etc/eitri.json', token: 'abc' },
    )
    assert.equal(
      readEnvironment({ HOME: '/h', EITRI_STATE_DIR: '', EITRI_TOKEN: '' }).stateDir,
      '/h/.local/state/eitri',
    )
    assert.equal(readEnvironment({ HOME: '/h', EITRI_TOKEN: '' }).token, undefined)
    assert.equal(readEnvironment({ HOME: '/h', EITRI_STORE: '' }).store, undefined)
    assert.equal(
      readEnvironment({ HOME: '/h', EITRI_STORE: 'postgres://db/eitri' }).store,
      'postgres://db/eitri',
    )
  })
})

describe('workspaceStateDir', () => {
  it('gives each workspace its own folder, keyed by its real path', () => {
    const first = workspaceStateDir('/state', '/home/ada/project')
    const second = workspaceStateDir('/state', '/home/bob/project')
    assert.match(first, /^\/state\/workspaces\/project-[0-9a-f]{16}$/)
    assert.notEqual(first, second)
    assert.equal(workspaceStateDir('/state', '/home/ada/project'), first)
  })
})
