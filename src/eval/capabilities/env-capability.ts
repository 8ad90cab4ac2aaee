/**
 * @module eval/capabilities/env-capability
 * `env`: only the environment names the configuration grants. A secret's name answers its
 * placeholder (`${secret:NAME}`), never its value: only the host replaces it, in a request to
 * the host it is bound to; a granted variable holding a secret's value, or a model key's, has
 * it masked. Nothing else of the server's environment (PATH, HOME, API keys) is reachable.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { capabilityFunction, type Capability } from '../capability.ts'
import { placeholder, secretMaskerFor } from './http/secret-placeholders.ts'

/** The `env` capability. */
export const envCapability: Capability = {
  name: 'env',
  purpose:
    'Read the environment variables the configuration grants; secrets come back as placeholders.',
  example: "const region = await env.get('AWS_REGION')",
  functions: [
    capabilityFunction({
      name: 'get',
      signature: 'get(name: string): Promise<string | null>',
      description:
        'A granted variable\'s value (null when unset), or for a secret its placeholder "${secret:NAME}", which http.fetch replaces only for the host and header the secret is bound to. Other names throw.',
      parameters: z.tuple([z.string().min(1)]),
      run: async ([name], { settings }) => {
        if (Object.hasOwn(settings.secrets, name)) return placeholder(name)
        if (!settings.env.includes(name)) {
          throw new EitriError(
            'permission_denied',
            `env.get refused ${name}: it is not granted. Granted: ${settings.env.join(', ') || '(none)'}; the person running eitri can add it under "env" in the configuration.`,
          )
        }
        const value = settings.readVariable(name)
        // A granted variable may hold a secret's or a model key's value too (GH_TOKEN beside
        // GITHUB_TOKEN, a key copied into another name).
        return value === undefined ? null : secretMaskerFor(settings).text(value)
      },
    }),
    capabilityFunction({
      name: 'list',
      signature: 'list(): Promise<{ granted: string[], secrets: string[] }>',
      description: 'The names env.get answers: granted variables and secrets.',
      parameters: z.tuple([]),
      run: async (_args, { settings }) => ({
        granted: [...settings.env],
        secrets: Object.keys(settings.secrets),
      }),
    }),
  ],
}
