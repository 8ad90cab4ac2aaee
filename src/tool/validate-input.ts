/**
 * @module tool/validate-input
 * Turns a zod failure into a message that names each field and what it expected.
 */
import type { z } from 'zod'

/**
 * Describes every issue of a failed parse, one per line, each led by its field path.
 *
 * @example
 * describeIssues(schema.safeParse({ path: 3 }).error) // "- path: expected string, received number"
 */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `- ${fieldPath(issue.path)}: ${issue.message}`).join('\n')
}

/** Renders a path such as `files[2].content`; the whole input is `(input)`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(input)'
  let rendered = ''
  for (const key of path) {
    if (typeof key === 'number') rendered += `[${key}]`
    else rendered += rendered === '' ? String(key) : `.${String(key)}`
  }
  return rendered
}
