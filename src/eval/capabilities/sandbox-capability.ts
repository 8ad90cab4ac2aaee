/**
 * @module eval/capabilities/sandbox-capability
 * `sandbox`: the sandbox describing itself, so a model can find out what it may call: every
 * capability with its purpose, an example and its functions, and any one in detail.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { capabilityFunction, type Capability } from '../capability.ts'

/** The `sandbox` capability over `capabilities()` (every capability, itself included). */
export function sandboxCapability(capabilities: () => readonly Capability[]): Capability {
  return {
    name: 'sandbox',
    purpose: 'Describe the capabilities available in this sandbox.',
    example: "await sandbox.overview()\nawait sandbox.doc('fs')",
    functions: [
      capabilityFunction({
        name: 'overview',
        signature: 'overview(): Promise<{ name, purpose, example, functions }[]>',
        description:
          'Every capability: its purpose, an example and the signatures of its functions.',
        parameters: z.tuple([]),
        run: async () =>
          capabilities().map((capability) => ({
            name: capability.name,
            purpose: capability.purpose,
            example: capability.example,
            functions: (capability.surface ?? capability.functions).map((fn) => fn.signature),
          })),
      }),
      capabilityFunction({
        name: 'doc',
        signature:
          'doc(name: string): Promise<{ name, purpose, example, functions: { signature, description }[] }>',
        description: 'One capability in detail.',
        parameters: z.tuple([z.string().min(1)]),
        run: async ([name]) => {
          const capability = capabilities().find((candidate) => candidate.name === name)
          if (capability === undefined) {
            throw new EitriError(
              'not_found',
              `No capability is named ${name}; there are: ${capabilities()
                .map((candidate) => candidate.name)
                .join(', ')}.`,
            )
          }
          return {
            name: capability.name,
            purpose: capability.purpose,
            example: capability.example,
            functions: (capability.surface ?? capability.functions).map((fn) => ({
              signature: fn.signature,
              description: fn.description,
            })),
          }
        },
      }),
    ],
  }
}
