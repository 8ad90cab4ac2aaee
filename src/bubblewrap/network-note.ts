/**
 * @module bubblewrap/network-note
 * Output that shows a program wanted the network the jail does not have, and what to say about
 * it: npm's own words ("cache mode is 'only-if-cached'") never mention a jail, so a model reads
 * them as a broken cache and tries `npm cache clean` or `--prefer-online`. One definition for
 * every door that runs a command in the jail: `shell`, `shell_output`, js_eval's `shell.run`
 * and `eitri exec` (decision 0040).
 */

/**
 * A program failing for want of the network: npm (and npx) told it is offline
 * (jail-environment.ts); a name lookup with no resolver to reach, as pip, Python, curl, wget
 * and Node report it (pip says only "No matching distribution found" once its retries end).
 */
const WANTED_NETWORK =
  /npm (?:error|ERR!) code ENOTCACHED|Temporary failure in name resolution|Could not resolve host|unable to resolve host address|getaddrinfo (?:EAI_AGAIN|ENOTFOUND)|Network is unreachable/

/** True when `output` shows a program failing for want of the network. */
export function wantedNetwork(output: string): boolean {
  return WANTED_NETWORK.test(output)
}

/** What a model is told after a jailed command that wanted the network failed. */
export const NETWORK_NOTE =
  "[the jail has no network: npm is told it is offline there, so a package it has not cached cannot be fetched (ENOTCACHED), and pip, curl or git find no host. Dependencies are installed on main: ask the person to run the install (npm install, pip install) in the workspace, or run it outside the jail with shell's escalate: {reason}, which a person approves (full access only). Forks use what main installed (node_modules, a virtualenv) as it is.]"

/**
 * The note for a jailed command that ended: {@link NETWORK_NOTE} when it failed and its output
 * shows it wanted the network, else undefined.
 */
export function networkNote(run: {
  readonly exitCode: number | null
  readonly stdout: string
  readonly stderr: string
}): string | undefined {
  return run.exitCode !== 0 && wantedNetwork(`${run.stdout}\n${run.stderr}`)
    ? NETWORK_NOTE
    : undefined
}

/** What a person is told after `eitri exec` of a command that wanted the network failed. */
export const NETWORK_NOTE_FOR_PERSON =
  'eitri: the jail has no network (npm is told it is offline: ENOTCACHED; other programs find no host). Install dependencies outside it, in the workspace itself (npm install), then run the command again; forks use them as they are.\n'
