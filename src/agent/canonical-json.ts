/**
 * @module agent/canonical-json
 * One text for one value: JSON with every object's keys sorted, at any depth, and no spaces.
 * Two equal values written with their keys in another order give the same text, so the text
 * (and a hash of it) identifies the value.
 */

/**
 * The canonical JSON text of plain JSON data (check it with `findNonPlainData` first).
 *
 * @example
 * canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] }) // '{"a":[{"c":3,"d":2}],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) return inner
    // No prototype, so no key (not even `__proto__`) can do more than hold a value.
    const sorted = Object.create(null) as Record<string, unknown>
    // Code-unit order, the same in every JavaScript engine and locale.
    for (const key of Object.keys(inner).sort())
      sorted[key] = (inner as Record<string, unknown>)[key]
    return sorted
  })
}
