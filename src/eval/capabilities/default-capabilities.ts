/**
 * @module eval/capabilities/default-capabilities
 * The capabilities every sandbox offers, in the order `sandbox.overview()` lists them. Later
 * capabilities add their namespace here.
 */
import type { Capability } from '../capability.ts'
import { CapabilityCatalog } from '../capability-catalog.ts'
import { driveCapability } from './drive-capability.ts'
import { envCapability } from './env-capability.ts'
import { fsCapability } from './fs-capability.ts'
import { httpCapability } from './http/http-capability.ts'
import { sandboxCapability } from './sandbox-capability.ts'
import { shellCapability } from './shell-capability.ts'
import { toolsCapability } from './tools-capability.ts'

/** The default catalog: fs, tools, shell, http, env, drive and sandbox, plus `extra`. */
export function defaultCatalog(extra: readonly Capability[] = []): CapabilityCatalog {
  const capabilities: Capability[] = [
    fsCapability,
    toolsCapability,
    shellCapability,
    httpCapability,
    envCapability,
    driveCapability,
    ...extra,
  ]
  capabilities.push(sandboxCapability(() => capabilities))
  return new CapabilityCatalog(capabilities)
}
