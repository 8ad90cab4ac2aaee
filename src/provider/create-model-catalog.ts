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
import type { ConfiguredProvider, ProviderType } from '../config/models-config.ts'
import { environmentValue } from '../config/environment.ts'
import { EitriError } from '../errors/eitri-error.ts'
import type { ModelCatalog, ModelPolicy, ModelPrice, ResolvedModel } from './model-catalog.ts'
import { registryFacts } from './model-registry.ts'

/** The providers that work with no entry in the configuration. */
export const BUILT_IN_PROVIDERS: Readonly<Record<string, ConfiguredProvider>> = Object.freeze({
  openai: { type: 'openai' },
  anthropic: { type: 'anthropic' },
})

/** Where each type's key is read from when its entry names no variable. */
const DEFAULT_KEY_VARIABLE: Readonly<Record<ProviderType, string | undefined>> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  // Local servers (llama.cpp, Ollama, vLLM) usually take no key.
  'openai-compatible': undefined,
}

/**
 * The vendors' own URLs, always passed explicitly: the adapters would otherwise read
 * OPENAI_BASE_URL or ANTHROPIC_BASE_URL from the environment, and a variable nobody configured
 * would decide where prompts and keys are sent.
 */
const DEFAULT_BASE_URL: Readonly<Record<'openai' | 'anthropic', string>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
}

/** What a catalog is made from: the configuration's model sections and the host environment. */
export interface ModelCatalogOptions {
  /** Configured providers by name; an entry named `openai` or `anthropic` replaces the built-in. */
  readonly providers?: Readonly<Record<string, ConfiguredProvider>> | undefined
  /** Prices by `provider:model`, overriding the built-in table. */
  readonly prices?: Readonly<Record<string, ModelPrice>> | undefined
  /** Context windows by `provider:model`, overriding the built-in table. */
  readonly contextWindows?: Readonly<Record<string, number>> | undefined
  /**
   * The host's environment, where keys are read when a model is resolved.
   * @default this process's environment
   */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
}

/**
 * A catalog of the configured and built-in providers. Nothing is read from the environment
 * until {@link ModelCatalog.resolve}.
 *
 * @example
 * const models = createModelCatalog({ providers: config.providers, prices: config.prices })
 * const { model, price } = models.resolve({ provider: 'anthropic', model: 'claude-sonnet-4-20250514' })
 */
export function createModelCatalog(options: ModelCatalogOptions = {}): ModelCatalog {
  const providers: Record<string, ConfiguredProvider> = {
    ...BUILT_IN_PROVIDERS,
    ...options.providers,
  }
  const prices = options.prices ?? {}
  const contextWindows = options.contextWindows ?? {}
  const env = options.env
  return {
    resolve(policy: ModelPolicy): ResolvedModel {
      const provider = Object.hasOwn(providers, policy.provider)
        ? providers[policy.provider]
        : undefined
      if (provider === undefined) {
        const configured = Object.keys(options.providers ?? {})
        throw new EitriError(
          'config_invalid',
          `Unknown model provider ${JSON.stringify(policy.provider)}. ` +
            `Configured providers: ${configured.length === 0 ? 'none' : configured.join(', ')}; ` +
            `built in: ${Object.keys(BUILT_IN_PROVIDERS).join(', ')}. Name one of them in modelPolicy.provider, ` +
            `or add it under "providers" in the configuration file, such as ` +
            `{"${safeName(policy.provider)}": {"type": "openai-compatible", "baseURL": "http://127.0.0.1:8080/v1"}}.`,
        )
      }
      if (typeof policy.model !== 'string' || policy.model.trim() === '') {
        throw new EitriError(
          'config_invalid',
          `modelPolicy.model is empty: name a model of the provider ${policy.provider}, such as gpt-4o-mini or claude-sonnet-4-20250514.`,
        )
      }
      const ref = `${policy.provider}:${policy.model}`
      const model = languageModel(policy, provider, readKey(policy.provider, provider, env))
      const known =
        provider.type === 'openai-compatible'
          ? { price: undefined, contextWindow: undefined }
          : registryFacts(provider.type, policy.model)
      const configuredPrice = Object.hasOwn(prices, ref) ? prices[ref] : undefined
      return {
        ref,
        model,
        price: configuredPrice ?? known.price,
        contextWindow:
          (Object.hasOwn(contextWindows, ref) ? contextWindows[ref] : undefined) ??
          known.contextWindow,
      }
    },
  }
}

/**
 * The provider's key from the host's environment; undefined for a provider that takes none.
 * @throws EitriError `not_available` naming the variable to set (never a value).
 */
function readKey(
  name: string,
  provider: ConfiguredProvider,
  env: Readonly<Record<string, string | undefined>> | undefined,
): string | undefined {
  const variable = provider.apiKeyEnv ?? DEFAULT_KEY_VARIABLE[provider.type]
  if (variable === undefined) return undefined
  const key = environmentValue(variable, env)
  if (key === undefined || key.trim() === '') {
    throw new EitriError(
      'not_available',
      `The model provider ${name} needs a key, and the environment variable ${variable} is not set: ` +
        `set ${variable} in the environment eitri runs in` +
        (provider.apiKeyEnv === undefined
          ? `, or name another variable with "apiKeyEnv" under providers.${name} in the configuration file.`
          : '.'),
    )
  }
  return key
}

function languageModel(
  policy: ModelPolicy,
  provider: ConfiguredProvider,
  apiKey: string | undefined,
): LanguageModelV4 {
  switch (provider.type) {
    case 'openai':
      // Chat completions, not the Responses API: see docs/decisions/0013-openai-chat-completions.md.
      return createOpenAI({
        name: policy.provider,
        baseURL: provider.baseURL ?? DEFAULT_BASE_URL.openai,
        ...(apiKey === undefined ? {} : { apiKey }),
      }).chat(policy.model)
    case 'anthropic':
      return createAnthropic({
        baseURL: provider.baseURL ?? DEFAULT_BASE_URL.anthropic,
        ...(apiKey === undefined ? {} : { apiKey }),
      }).languageModel(policy.model)
    case 'openai-compatible':
      return createOpenAICompatible({
        name: policy.provider,
        // The configuration's schema requires it; an entry built in code may still lack it.
        baseURL: provider.baseURL ?? missingBaseURL(policy.provider),
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

/** A provider name as it may be configured, for the example in an error. */
function safeName(name: unknown): string {
  return typeof name === 'string' && /^[a-z][a-z0-9_-]{0,31}$/.test(name) ? name : 'local'
}
