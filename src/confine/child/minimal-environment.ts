/**
 * @module confine/child/minimal-environment
 * The environment a confined child gets by default: enough to run, nothing of the parent's, so
 * no token or key set in the host's environment can reach it.
 */

/** Where programs are looked for. Fixed, not the parent's `PATH`. */
export const MINIMAL_PATH = '/usr/local/bin:/usr/bin:/bin'

/** `PATH`, `HOME`, `LANG` and `TMPDIR`, and nothing else. */
export function minimalEnvironment(home: string, temporaryFolder: string): Record<string, string> {
  return { PATH: MINIMAL_PATH, HOME: home, LANG: 'C.UTF-8', TMPDIR: temporaryFolder }
}
