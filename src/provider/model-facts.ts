/**
 * @module provider/model-facts
 * What a configuration says of a model, checked without loading any provider adapter: the
 * provider exists, the model is named, the key is in the environment, and the price and context
 * window. Hires are checked with this alone, so a process that runs no model never loads the
 * AI SDK.
 */
import { DEFAULT_KEY_VARIABLE, type ConfiguredProvider } from '../config/models-config.ts'
import { environmentValue } from '../config/environment.ts'
import { EitriError } from '../errors/eitri-error.ts'
import type { ModelFacts, ModelPolicy, ModelPrice } from './model-catalog.ts'
import { registryFacts } from './model-registry.ts'

/** The providers that work with no entry in the configuration. */
export const BUILT_IN_PROVIDERS: Readonly<Record<string, ConfiguredProvider>> = Object.freeze({
  openai: { type: 'openai' },
  anthropic: { type: 'anthropic' },
})

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

/** A checked policy: its facts, its provider's entry and its key (for the adapter only). */
export interface CheckedModel extends ModelFacts {
  readonly provider: ConfiguredProvider
  /** Handed to the adapter and nowhere else. */
  readonly apiKey: string | undefined
}

/**
 * Checks `policy` against `options`.
 * @throws EitriError `config_invalid` (unknown provider, empty model) or `not_available` (the
 *   key's variable is not set), naming the fix and never a key.
 */
export function checkModel(options: ModelCatalogOptions, policy: ModelPolicy): CheckedModel {
  const providers: Record<string, ConfiguredProvider> = {
    ...BUILT_IN_PROVIDERS,
    ...options.providers,
  }
  const prices = options.prices ?? {}
  const contextWindows = options.contextWindows ?? {}
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
  const apiKey = readKey(policy.provider, provider, options.env)
  const known =
    provider.type === 'openai-compatible'
      ? { price: undefined, contextWindow: undefined }
      : registryFacts(provider.type, policy.model)
  const configuredPrice = Object.hasOwn(prices, ref) ? prices[ref] : undefined
  return {
    ref,
    provider,
    apiKey,
    price: configuredPrice ?? known.price,
    contextWindow:
      (Object.hasOwn(contextWindows, ref) ? contextWindows[ref] : undefined) ?? known.contextWindow,
  }
}

/** The facts of a checked model, without its provider entry or key. */
export function factsOf(checked: CheckedModel): ModelFacts {
  return { ref: checked.ref, price: checked.price, contextWindow: checked.contextWindow }
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

/** A provider name as it may be configured, for the example in an error. */
function safeName(name: unknown): string {
  return typeof name === 'string' && /^[a-z][a-z0-9_-]{0,31}$/.test(name) ? name : 'local'
}
