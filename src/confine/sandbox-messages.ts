/**
 * @module confine/sandbox-messages
 * What a confined tool answers when its call did not end well: a timeout, a failure, a write
 * outside the permitted paths. Each says what happened and what to do instead.
 */
import type { SandboxMode } from '../tool/tool-governance.ts'

/**
 * The timeout's content, exactly.
 *
 * @example
 * timeoutMessage('fetch_page', 1500) // "TIMEOUT: tool 'fetch_page' exceeded the 1.5 s sandbox limit."
 */
export function timeoutMessage(tool: string, timeoutMs: number): string {
  return `TIMEOUT: tool '${tool}' exceeded the ${seconds(timeoutMs)} s sandbox limit.`
}

/** The content of a call that failed in the sandbox. */
export function failureMessage(tool: string, message: string | undefined): string {
  return `ERROR: tool '${tool}' failed in the sandbox: ${message === undefined || message === '' ? 'unknown error' : message}`
}

/** The content of a call that wrote outside the permitted paths. */
export function violationMessage(
  tool: string,
  paths: readonly string[],
  mode: SandboxMode,
  allowPaths: readonly string[],
): string {
  const permitted = [
    ...(mode === 'tempdir' ? ['its scratch folder'] : []),
    ...allowPaths.map((allowed) => `${allowed} (allowPaths)`),
  ]
  const shown = paths.map((written) =>
    written.startsWith('/') ? written : `${written} (in its scratch folder)`,
  )
  return (
    `VIOLATION: tool '${tool}' wrote outside the permitted paths: ${shown.join(', ')}. ` +
    `In ${mode} mode it may write ${permitted.length === 0 ? 'nowhere' : `only in ${permitted.join(', ')}`}. ` +
    'Its result is withheld: change the function to write only there, or confine it in tempdir mode or with allowPaths that cover these paths.'
  )
}

/** Seconds without needless decimals: 30000 → "30", 1500 → "1.5", 250 → "0.25". */
function seconds(milliseconds: number): string {
  return String(Number((milliseconds / 1000).toFixed(3)))
}
