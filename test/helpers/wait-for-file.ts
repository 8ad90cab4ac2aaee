/**
 * Waits for a file another process writes, and answers its content (undefined if it never
 * appears within the limit).
 */
import fs from 'node:fs/promises'
import { setTimeout as delay } from 'node:timers/promises'

export async function waitForFile(file: string, limitMs = 10_000): Promise<string | undefined> {
  for (let waited = 0; waited < limitMs; waited += 20) {
    const content = await fs.readFile(file, 'utf8').catch(() => undefined)
    if (content !== undefined) return content
    await delay(20)
  }
  return undefined
}
