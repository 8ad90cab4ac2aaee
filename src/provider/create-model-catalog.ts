/**
 * @module provider/create-model-catalog
 * The model catalog of a configuration: its providers (plus the built-in `openai` and
 * `anthropic`), prices and context windows, with keys read from the host's environment when a
 * model is resolved. A key is handed to the provider's adapter and nowhere else: never into an
 * error, a returned field or a log.
 */
import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAI } from '@ai-sdk/openai'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import type { LanguageModelV4 } from '@ai-sdk/provider'
import type { ConfiguredProvider } from '../config/models-config.ts'
import { EitriError } from '../errors/eitri-error.ts'
import type { ModelCatalog, ModelPolicy, ResolvedModel } from './model-catalog.ts'
import { withholdKey } from './key-withheld-model.ts'
import { checkModel, factsOf, type ModelCatalogOptions } from './model-facts.ts'

export { BUILT_IN_PROVIDERS, type ModelCatalogOptions } from './model-facts.ts'

/**
 * The vendors' own URLs, always passed explicitly: the adapters would otherwise read
 * OPENAI_BASE_URL or ANTHROPIC_BASE_URL from the environment, and a variable nobody configured
 * would decide where prompts and keys are sent.
 */
const DEFAULT_BASE_URL: Readonly<Record<'openai' | 'anthropic', string>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
}

/** A catalog whose adapters are loaded: it resolves synchronously. */
export interface LoadedModelCatalog extends ModelCatalog {
  resolve(policy: ModelPolicy): ResolvedModel
}

/**
 * A catalog of the configured and built-in providers. Nothing is read from the environment
 * until {@link ModelCatalog.resolve}.
 *
 * @example
 * const models = createModelCatalog({ providers: config.providers, prices: config.prices })
 * const { model, price } = models.resolve({ provider: 'anthropic', model: 'claude-sonnet-4-20250514' })
 */
export function createModelCatalog(options: ModelCatalogOptions = {}): LoadedModelCatalog {
  return {
    describe: (policy) => factsOf(checkModel(options, policy)),
    resolve(policy: ModelPolicy): ResolvedModel {
      const checked = checkModel(options, policy)
      const baseURL = baseURLOf(policy, checked.provider)
      return {
        ...factsOf(checked),
        // A provider's error may echo the key it was sent: its errors never carry it.
        model: withholdKey(
          languageModel(policy, checked.provider, baseURL, checked.apiKey),
          checked.apiKey,
        ),
        host: new URL(baseURL).host,
      }
    },
  }
}

/** Where `provider`'s calls go: its configured URL, or its vendor's. */
function baseURLOf(policy: ModelPolicy, provider: ConfiguredProvider): string {
  switch (provider.type) {
    case 'openai':
    case 'anthropic':
      return provider.baseURL ?? DEFAULT_BASE_URL[provider.type]
    case 'openai-compatible':
      // The configuration's schema requires it; an entry built in code may still lack it.
      return provider.baseURL ?? missingBaseURL(policy.provider)
  }
}

function languageModel(
  policy: ModelPolicy,
  provider: ConfiguredProvider,
  baseURL: string,
  apiKey: string | undefined,
): LanguageModelV4 {
  switch (provider.type) {
    case 'openai':
      // Chat completions, not the Responses API: see docs/decisions/0013-openai-chat-completions.md.
      return createOpenAI({
        name: policy.provider,
        baseURL,
        ...(apiKey === undefined ? {} : { apiKey }),
      }).chat(policy.model)
    case 'anthropic':
      return createAnthropic({
        baseURL,
        ...(apiKey === undefined ? {} : { apiKey }),
      }).languageModel(policy.model)
    case 'openai-compatible':
      return createOpenAICompatible({
        name: policy.provider,
        baseURL,
        // Such servers report a stream's usage only when asked, and budgets need it.
        includeUsage: true,
        ...(apiKey === undefined ? {} : { apiKey }),
      }).chatModel(policy.model)
  }
}

function missingBaseURL(name: string): never {
  throw new EitriError(
    'config_invalid',
    `The openai-compatible provider ${name} has no baseURL: set providers.${name}.baseURL in the configuration file, such as http://127.0.0.1:8080/v1.`,
  )
}
