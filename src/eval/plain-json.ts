/**
 * @module eval/plain-json
 * Parses what the guest sends across the boundary: JSON text only, at most {@link
 * MAX_JSON_DEPTH} deep, and never a key that could reach a prototype (`__proto__`,
 * `constructor`, `prototype`), so nothing the guest sends can pollute the host's objects when a
 * capability copies or merges it.
 */
import { MAX_JSON_DEPTH } from './eval-limits.ts'

/** Keys refused at any depth. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set([
  '__proto__',
  'constructor',
  'prototype',
])

/** Parsed JSON, or why it was refused. */
export type PlainJson =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string }

/** Parses and checks `text`. Never throws. */
export function parsePlainJson(text: string, maxDepth: number = MAX_JSON_DEPTH): PlainJson {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { ok: false, message: `not valid JSON: ${(error as Error).message}` }
  }
  // Iterative, so a nesting bomb costs a refusal, not a stack overflow.
  const pending: { value: unknown; depth: number; path: string }[] = [{ value, depth: 0, path: '' }]
  while (pending.length > 0) {
    const item = pending.pop() as { value: unknown; depth: number; path: string }
    if (typeof item.value !== 'object' || item.value === null) continue
    if (item.depth >= maxDepth) {
      return {
        ok: false,
        message: `nested deeper than ${maxDepth} levels at ${item.path || '(top)'}`,
      }
    }
    if (Array.isArray(item.value)) {
      item.value.forEach((element, index) =>
        pending.push({ value: element, depth: item.depth + 1, path: `${item.path}[${index}]` }),
      )
      continue
    }
    for (const key of Object.keys(item.value)) {
      if (FORBIDDEN_KEYS.has(key)) {
        return { ok: false, message: `the key "${key}" is refused (at ${item.path || '(top)'})` }
      }
      pending.push({
        value: (item.value as Record<string, unknown>)[key],
        depth: item.depth + 1,
        path: `${item.path}.${key}`,
      })
    }
  }
  return { ok: true, value }
}
