/**
 * @module config/models-config
 * The configuration of models: providers beyond the built-in ones, prices and context windows
 * per model. Keys are never in the file, only the names of the environment variables that hold
 * them, so the file can be shared and versioned without leaking one.
 */
import { z } from 'zod'

/** The kinds of provider eitri speaks to, each through its AI SDK adapter. */
export const PROVIDER_TYPES = ['openai', 'anthropic', 'openai-compatible'] as const

/** A kind of provider; see {@link PROVIDER_TYPES}. */
export type ProviderType = (typeof PROVIDER_TYPES)[number]

/** Where each type's key is read from when its entry names no variable. */
export const DEFAULT_KEY_VARIABLE: Readonly<Record<ProviderType, string | undefined>> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  // Local servers (llama.cpp, Ollama, vLLM) usually take no key.
  'openai-compatible': undefined,
}

/**
 * The environment variables holding model keys, each with where it is named: the built-in
 * providers' variables (even when an entry replaces them: they hold keys all the same) and each
 * configured provider's.
 */
export function keyVariables(
  providers: Readonly<Record<string, ConfiguredProvider>>,
): Map<string, string> {
  const variables = new Map<string, string>([
    ['OPENAI_API_KEY', 'the openai provider'],
    ['ANTHROPIC_API_KEY', 'the anthropic provider'],
  ])
  for (const [name, provider] of Object.entries(providers)) {
    const variable = provider.apiKeyEnv ?? DEFAULT_KEY_VARIABLE[provider.type]
    if (variable !== undefined) variables.set(variable, `providers.${name}`)
  }
  return variables
}

const providerName = z
  .string()
  .regex(
    /^[a-z][a-z0-9_-]{0,31}$/,
    'a provider name is lower case letters, digits, - and _, at most 32 characters, such as local',
  )

const environmentName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name such as LOCAL_KEY')

const baseURL = z.string().refine(
  (value) => {
    try {
      const url = new URL(value)
      return (
        (url.protocol === 'http:' || url.protocol === 'https:') &&
        url.username === '' &&
        url.password === ''
      )
    } catch {
      return false
    }
  },
  {
    error:
      'an http(s) URL without credentials, such as http://127.0.0.1:8080/v1 (the key goes in apiKeyEnv)',
  },
)

const providerSchema = z
  .strictObject(
    {
      type: z.enum(PROVIDER_TYPES, {
        error: (issue) =>
          `unknown provider type ${JSON.stringify(issue.input)}: one of ${PROVIDER_TYPES.join(', ')}`,
      }),
      baseURL: baseURL
        .optional()
        .describe("The API's URL; required for openai-compatible, the vendor's own otherwise."),
      apiKeyEnv: environmentName
        .optional()
        .describe(
          'The environment variable holding the key (OPENAI_API_KEY and ANTHROPIC_API_KEY by default; none for openai-compatible).',
        ),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys' && issue.keys.some((key) => /key|token/i.test(key))
          ? `a key is never written in the configuration file: put it in an environment variable and name that with "apiKeyEnv" (unrecognized: ${issue.keys.join(', ')})`
          : undefined,
    },
  )
  .refine((provider) => provider.type !== 'openai-compatible' || provider.baseURL !== undefined, {
    error: 'an openai-compatible provider needs a baseURL, such as http://127.0.0.1:8080/v1',
    path: ['baseURL'],
  })

const MODEL_REF_FIX = 'a model is named PROVIDER:MODEL, such as local:stub-1'

/** `provider:model`, as prices and context windows name a model. */
const modelRef = z.string().regex(/^[a-z][a-z0-9_-]{0,31}:\S+$/, MODEL_REF_FIX)

/** Zod reports a bad record key as "Invalid key in record" (its path names the key): say what to write. */
function keyError(fix: string) {
  return (issue: { code?: string }) => (issue.code === 'invalid_key' ? fix : undefined)
}

const dollarsPerMillion = z.number().finite().min(0)

const priceSchema = z.strictObject({
  input: dollarsPerMillion.describe('Dollars per million input tokens.'),
  output: dollarsPerMillion.describe('Dollars per million output tokens.'),
  cachedInput: dollarsPerMillion
    .optional()
    .describe('Dollars per million input tokens read from the cache; the input price if absent.'),
})

/** The schema of the `providers`, `prices` and `contextWindows` sections. */
export const modelsConfigShape = {
  providers: z
    .record(providerName, providerSchema, {
      error: keyError(
        'a provider name is lower case letters, digits, - and _, at most 32 characters, such as local',
      ),
    })
    .default({})
    .describe(
      'Providers of models by name (openai and anthropic need no entry): their type, URL and the environment variable holding their key.',
    ),
  prices: z
    .record(modelRef, priceSchema, { error: keyError(MODEL_REF_FIX) })
    .default({})
    .describe(
      'Prices per model (PROVIDER:MODEL) in dollars per million tokens; they override the built-in table.',
    ),
  contextWindows: z
    .record(modelRef, z.number().int().min(256).max(100_000_000), {
      error: keyError(MODEL_REF_FIX),
    })
    .default({})
    .describe(
      'Context windows per model (PROVIDER:MODEL) in tokens, for models the built-in table does not know; they override it.',
    ),
}

/** A configured provider. */
export type ConfiguredProvider = z.output<typeof providerSchema>
/** A configured price, dollars per million tokens. */
export type ConfiguredPrice = z.output<typeof priceSchema>
