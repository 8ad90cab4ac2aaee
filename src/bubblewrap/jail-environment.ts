/**
 * @module bubblewrap/jail-environment
 * The environment a jailed program starts with: cleared, then a fixed allowlist of harmless
 * names. Nothing of the host's environment passes through, so no token or key can leak.
 */

import { GIT_WITHOUT_HOOKS } from '../workspace/git/run-git.ts'
import { JAIL_HOME } from './jail-spec.ts'

/** The identity git uses inside the jail. */
export const JAIL_GIT_NAME = 'eitri agent'
export const JAIL_GIT_EMAIL = 'agent@eitri.invalid'

/**
 * The base environment. Git gets an identity, no system or global configuration, hooks
 * pointed at nothing, and every folder marked safe (files appear owned by the jail's user);
 * programs get a home, and gpg one of its own, that no command can write.
 */
export function jailEnvironment(
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    // Read-only and empty: git expands `~/` in a repository's own settings (`include.path`,
    // `core.fsmonitor`, a textconv) with it, and other programs read dotfiles there. Its
    // configuration, data and state folders (XDG_CONFIG_HOME and the rest, unset) fall inside it.
    HOME: JAIL_HOME,
    TMPDIR: '/tmp',
    // Caches, which tools otherwise keep under the home (pip, node-gyp, yarn, Go's build
    // cache), in the `/tmp` commands write: only caches and logs go to `/tmp`, never a place a
    // program reads settings or programs from (decision 0064).
    XDG_CACHE_HOME: '/tmp/.cache',
    // npm keeps its cache and its logs in `~/.npm` unless told; it reads `~/.npmrc` (left in
    // the home) for settings, never its cache.
    npm_config_cache: '/tmp/.npm',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TERM: 'dumb',
    USER: 'agent',
    LOGNAME: 'agent',
    SHELL: '/bin/bash',
    // The jail has no network: npm (and npx, pnpm) told it is offline fails a fetch at once
    // (ENOTCACHED) instead of retrying the registry until the command's timeout, whose answer
    // then advises a longer one. Scripts (`npm test`, `npm run build`) fetch nothing.
    npm_config_offline: 'true',
    GIT_AUTHOR_NAME: JAIL_GIT_NAME,
    GIT_AUTHOR_EMAIL: JAIL_GIT_EMAIL,
    GIT_COMMITTER_NAME: JAIL_GIT_NAME,
    GIT_COMMITTER_EMAIL: JAIL_GIT_EMAIL,
    // gpg's home is a folder no one can make (procfs): git runs gpg to verify signatures in
    // commands that need no person (`git log` under `log.showSignature`), and gpg obeys the
    // gpg.conf of its home, whose `dirmngr-program` it runs. The home is read-only (decision
    // 0064), and gpg's is still one no folder can stand at (decision 0033).
    GNUPGHOME: '/proc/eitri-no-gnupg',
    ...GIT_WITHOUT_HOOKS,
    ...extra,
  }
}
