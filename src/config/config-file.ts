/**
 * @module config/config-file
 * The configuration file: JSON, outside the workspace, so no agent can rewrite its own
 * permissions. Unknown keys are errors, so a typo never silently weakens a rule.
 */
import fs from 'node:fs/promises'
import { z } from 'zod'
import { EitriError } from '../errors/eitri-error.ts'
import { describeIssues } from '../tool/validate-input.ts'

/** The configuration file's schema. Later capabilities add their sections here. */
export const configSchema = z.strictObject({
  protectedPaths: z
    .array(z.string().min(1))
    .default([])
    .describe('Extra workspace paths (globs, anchored at the root) that tools may not write.'),
})

/** A loaded, validated configuration. */
export type EitriConfig = z.output<typeof configSchema>

/**
 * Reads and validates the configuration file. A missing file means the defaults.
 *
 * @throws EitriError `config_invalid` naming the file and each bad field.
 */
export async function loadConfig(configPath: string): Promise<EitriConfig> {
  let text: string
  try {
    text = await fs.readFile(configPath, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return configSchema.parse({})
    throw new EitriError(
      'config_invalid',
      `Cannot read the configuration file ${configPath}: ${(error as Error).message}`,
    )
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new EitriError(
      'config_invalid',
      `The configuration file ${configPath} is not valid JSON: ${(error as Error).message}`,
    )
  }
  const parsed = configSchema.safeParse(json)
  if (!parsed.success) {
    throw new EitriError(
      'config_invalid',
      `The configuration file ${configPath} is invalid:\n${describeIssues(parsed.error)}`,
    )
  }
  return parsed.data
}
