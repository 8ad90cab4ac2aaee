/**
 * @module bench/scripted-catalog
 * The catalog of a scripted run: every policy resolves to the environment's scripted model, at
 * a fixed price so its Runs are charged and budgeted like any model's.
 */
import type { ModelCatalog, ModelPolicy, ModelPrice } from '../provider/model-catalog.ts'
import type { BenchEnvironment } from './bench-environment.ts'
import { scriptedModel } from './scripted-model.ts'

/** The model name that plays the environment's script: `--model scripted`. */
export const SCRIPTED_MODEL = 'scripted'

/** $1 a million input tokens, $2 a million output tokens. */
export const SCRIPTED_PRICE: ModelPrice = { input: 1, output: 2 }

/** A catalog whose every model plays `env`'s script (or `steps`, for a test's variant). */
export function scriptedCatalog(
  env: BenchEnvironment,
  steps: BenchEnvironment['script'] = env.script,
): ModelCatalog {
  const model = scriptedModel(steps, env.name)
  const describe = (policy: ModelPolicy) => ({
    ref: `${policy.provider}:${policy.model}`,
    price: SCRIPTED_PRICE,
    contextWindow: 100_000,
  })
  return { describe, resolve: (policy) => ({ ...describe(policy), model }) }
}
