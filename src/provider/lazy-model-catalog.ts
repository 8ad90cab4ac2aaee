/**
 * @module provider/lazy-model-catalog
 * The model catalog eitri's own surfaces use: it checks policies without the AI SDK and loads
 * the provider adapters (with a dynamic import) only when a model is first resolved, so a
 * command that runs no model (`eitri exec`, `eitri --help`, a server that hires none) never
 * pays for them.
 */
import type { ModelCatalog, ModelPolicy, ResolvedModel } from './model-catalog.ts'
import { checkModel, factsOf, type ModelCatalogOptions } from './model-facts.ts'

/**
 * A catalog of the configured and built-in providers whose adapters load at the first
 * {@link ModelCatalog.resolve}.
 *
 * @example
 * const models = lazyModelCatalog({ providers: config.providers, prices: config.prices })
 * models.describe({ provider: 'anthropic', model: 'claude-sonnet-4-5' }).price
 */
export function lazyModelCatalog(options: ModelCatalogOptions = {}): ModelCatalog {
  let loaded: Promise<ModelCatalog> | undefined
  return {
    describe: (policy: ModelPolicy) => factsOf(checkModel(options, policy)),
    async resolve(policy: ModelPolicy): Promise<ResolvedModel> {
      loaded ??= import('./create-model-catalog.ts').then((module) =>
        module.createModelCatalog(options),
      )
      return (await loaded).resolve(policy)
    },
  }
}
