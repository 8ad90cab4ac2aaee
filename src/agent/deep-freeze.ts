/**
 * @module agent/deep-freeze
 * Freezing plain data all the way down, so a value handed out (an agent definition, a roster's
 * list) cannot be changed by whoever holds it: in strict mode a write throws.
 */

/** Freezes `value` and every array and object inside it, then returns it. */
export function deepFreeze<Value>(value: Value): Value {
  const pending: unknown[] = [value]
  const seen = new Set<object>()
  while (pending.length > 0) {
    const item = pending.pop()
    if (typeof item !== 'object' || item === null || seen.has(item)) continue
    seen.add(item)
    Object.freeze(item)
    for (const child of Object.values(item)) pending.push(child)
  }
  return value
}
