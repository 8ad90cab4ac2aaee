/**
 * @module provider/model-catalog
 * Which model a definition's `modelPolicy` names, and what it costs: the language model (through
 * the AI SDK's provider interface), its price per million tokens and its context window. Keys
 * come only from the host's environment and never appear in what is returned or thrown.
 */
import type { LanguageModelV4 } from '@ai-sdk/provider'

/** Dollars per million tokens. */
export interface ModelPrice {
  readonly input: number
  readonly output: number
  /** Input tokens read from the provider's cache. @default input */
  readonly cachedInput?: number | undefined
}

/** What a definition names: a configured (or built-in) provider and one of its models. */
export interface ModelPolicy {
  readonly provider: string
  readonly model: string
}

/** What is known of a model without loading its provider's adapter. */
export interface ModelFacts {
  /** `provider:model`, as prices and traces name it. */
  readonly ref: string
  /** Undefined when no price is known: a dollar budget on it is refused, never guessed. */
  readonly price: ModelPrice | undefined
  /** In tokens; undefined when unknown. */
  readonly contextWindow: number | undefined
}

/** A model ready to call. */
export interface ResolvedModel extends ModelFacts {
  readonly model: LanguageModelV4
  /**
   * Where its calls go: the host (and port) of the provider's URL, never its path, query or
   * credentials, so a failure can say which server did not answer. Undefined when unknown.
   */
  readonly host?: string | undefined
}

/** Resolves model policies. */
export interface ModelCatalog {
  /**
   * What a policy names, checked as {@link ModelCatalog.resolve} checks it (provider, model, key)
   * but without loading the provider's adapter: hires are checked with this, so a process that
   * runs no model never loads the AI SDK.
   * @throws EitriError as {@link ModelCatalog.resolve}.
   */
  describe(policy: ModelPolicy): ModelFacts
  /**
   * The model a policy names.
   * @throws EitriError `config_invalid` or `not_available` naming the provider and the fix (a
   *   missing key names its environment variable, never its value).
   */
  resolve(policy: ModelPolicy): ResolvedModel | Promise<ResolvedModel>
}
