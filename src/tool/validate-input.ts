/**
 * @module tool/validate-input
 * Turns a zod failure into a message that names each field and what it expected.
 */
import { z } from 'zod'
import { inputExcerpt } from '../errors/input-excerpt.ts'

/**
 * Describes every issue of a failed parse, one per line, each led by its field path.
 *
 * @example
 * describeIssues(schema.safeParse({ path: 3 }).error) // "- path: expected string, received number"
 */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `- ${fieldPath(issue.path)}: ${issue.message}`).join('\n')
}

/**
 * Renders a path such as `files[2].content`; the whole input is `(input)`. A key is the
 * caller's (a record's key, an unknown field), so each is quoted bounded.
 */
export function fieldPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(input)'
  let rendered = ''
  for (const key of path) {
    if (typeof key === 'number') rendered += `[${key}]`
    else rendered += `${rendered === '' ? '' : '.'}${inputExcerpt(String(key))}`
  }
  return rendered
}

/**
 * What a tool call's failed input needs to be fixed: each issue (a missing field said to be
 * missing, not "expected string, received undefined"), then the fields the tool does not have,
 * with the ones it does (`{"cmd": "ls"}` for `shell`: "cmd: not a field of this tool; its
 * fields: command, timeout_s?, …"). Unknown fields are named only when the input failed anyway:
 * a call that parses ignores them, as before.
 */
export function describeInvalidInput(
  parameters: z.ZodType,
  input: unknown,
  error: z.ZodError,
): string {
  const lines = error.issues.map((issue) =>
    issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined
      ? `- ${fieldPath(issue.path)}: missing; it is required (${issue.expected})`
      : `- ${fieldPath(issue.path)}: ${issue.message}`,
  )
  if (parameters instanceof z.ZodObject && isRecord(input)) {
    const shape = parameters.shape as Record<string, z.ZodType>
    const unknown = Object.keys(input).filter((key) => !Object.hasOwn(shape, key))
    if (unknown.length > 0) {
      const fields = Object.entries(shape).map(([name, field]) =>
        field.safeParse(undefined).success ? `${name}?` : name,
      )
      const optional = fields.some((field) => field.endsWith('?')) ? ' (? optional)' : ''
      for (const key of unknown)
        lines.push(
          `- ${inputExcerpt(key)}: not a field of this tool; its fields: ${fields.join(', ')}${optional}`,
        )
    }
  }
  return lines.join('\n')
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined
    value = (value as Record<PropertyKey, unknown>)[key]
  }
  return value
}
