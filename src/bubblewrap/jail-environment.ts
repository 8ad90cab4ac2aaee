/**
 * @module bubblewrap/jail-environment
 * The environment a jailed program starts with: cleared, then a fixed allowlist of harmless
 * names. Nothing of the host's environment passes through, so no token or key can leak.
 */

import { GIT_WITHOUT_HOOKS } from '../workspace/git/run-git.ts'

/** The identity git uses inside the jail. */
export const JAIL_GIT_NAME = 'eitri agent'
export const JAIL_GIT_EMAIL = 'agent@eitri.invalid'

/**
 * The base environment. Git gets an identity, no system or global configuration, hooks
 * pointed at nothing, and every folder marked safe (files appear owned by the jail's user);
 * gpg gets no home a command could write.
 */
export function jailEnvironment(
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: '/tmp',
    TMPDIR: '/tmp',
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
    // gpg.conf of its home, whose `dirmngr-program` it runs. The home (`/tmp`) is any
    // command's to write, and a warm jail keeps it between commands.
    GNUPGHOME: '/proc/eitri-no-gnupg',
    ...GIT_WITHOUT_HOOKS,
    ...extra,
  }
}
