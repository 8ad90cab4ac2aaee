/**
 * @module config/environment
 * The only place eitri reads environment variables. Everything else receives these values.
 */
import os from 'node:os'
import path from 'node:path'

/** What the environment says about where eitri keeps things. */
export interface EitriEnvironment {
  /** eitri's state folder: `$EITRI_STATE_DIR`, else `${XDG_STATE_HOME:-~/.local/state}/eitri`. */
  readonly stateDir: string
  /** The configuration file: `$EITRI_CONFIG`, else `${XDG_CONFIG_HOME:-~/.config}/eitri/config.json`. */
  readonly configPath: string
  /** `$EITRI_TOKEN`: the bearer token the HTTP server requires. */
  readonly token: string | undefined
  /** `$EITRI_STORE`: the store's URL (`sqlite:PATH` or `postgres://…`); absent when unset. */
  readonly store?: string | undefined
  /** The user's home folder (`$HOME`). */
  readonly home?: string
  /**
   * The git configuration files every repository of the user reads besides its own (global and
   * system), as git finds them: their relative hooks paths apply to every repository.
   */
  readonly gitConfigs?: readonly string[]
  /** `EITRI_WASM_TIER_UP=1`: leave V8's WebAssembly tiering as it is (decision 0003). */
  readonly wasmTierUp?: boolean
}

/** Reads the environment. Pass a record to read another one (tests). */
export function readEnvironment(
  env: Readonly<Record<string, string | undefined>> = process.env,
): EitriEnvironment {
  const home = env['HOME'] ?? os.homedir()
  const stateHome = nonEmpty(env['XDG_STATE_HOME']) ?? path.join(home, '.local', 'state')
  const configHome = nonEmpty(env['XDG_CONFIG_HOME']) ?? path.join(home, '.config')
  return {
    stateDir: path.resolve(nonEmpty(env['EITRI_STATE_DIR']) ?? path.join(stateHome, 'eitri')),
    configPath: path.resolve(
      nonEmpty(env['EITRI_CONFIG']) ?? path.join(configHome, 'eitri', 'config.json'),
    ),
    token: nonEmpty(env['EITRI_TOKEN']),
    ...(nonEmpty(env['EITRI_STORE']) === undefined ? {} : { store: nonEmpty(env['EITRI_STORE']) }),
    home,
    gitConfigs: gitConfigFiles(env, home, configHome),
    ...(env['EITRI_WASM_TIER_UP'] === '1' && { wasmTierUp: true }),
  }
}

/**
 * The locations the environment names outright (`EITRI_STATE_DIR`, `EITRI_CONFIG`,
 * `EITRI_STORE`), made absolute; absent when left to their defaults. An MCP client starts
 * eitri with an environment of its own, so settings written for it spell these out.
 */
export function namedLocations(env: Readonly<Record<string, string | undefined>> = process.env): {
  stateDir?: string
  configPath?: string
  store?: string
} {
  const stateDir = nonEmpty(env['EITRI_STATE_DIR'])
  const configPath = nonEmpty(env['EITRI_CONFIG'])
  const store = nonEmpty(env['EITRI_STORE'])
  return {
    ...(stateDir === undefined ? {} : { stateDir: path.resolve(stateDir) }),
    ...(configPath === undefined ? {} : { configPath: path.resolve(configPath) }),
    ...(store === undefined ? {} : { store }),
  }
}

/** Where git reads global and system configuration, as git itself decides. */
function gitConfigFiles(
  env: Readonly<Record<string, string | undefined>>,
  home: string,
  configHome: string,
): string[] {
  const global = nonEmpty(env['GIT_CONFIG_GLOBAL'])
  const files =
    global === undefined
      ? [path.join(configHome, 'git', 'config'), path.join(home, '.gitconfig')]
      : [global]
  if (nonEmpty(env['GIT_CONFIG_NOSYSTEM']) === undefined)
    files.push(nonEmpty(env['GIT_CONFIG_SYSTEM']) ?? '/etc/gitconfig')
  return files.filter((file) => file !== '/dev/null').map((file) => path.resolve(file))
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value
}

/**
 * A copy of this process's whole environment, secrets included. Only for what asks for it by
 * name and says it is unsafe, such as `confine(..., { env: 'inherit' })`.
 */
export function parentEnvironment(): Record<string, string> {
  const copy: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined) copy[name] = value
  }
  return copy
}

/**
 * One variable of this process's environment, read at the moment it is needed: a name the
 * configuration grants to `env.get`, or a secret's value, which only the host ever holds (it is
 * put into a request to the secret's own host and never sent into a sandbox).
 */
export function environmentValue(
  name: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  return Object.hasOwn(env, name) ? env[name] : undefined
}
