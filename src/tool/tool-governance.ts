/**
 * @module tool/tool-governance
 * What a confined tool declares about itself, for the programs that decide whether and how to
 * offer it: its side effects, its limits and its sandbox. Plain data, frozen with the tool.
 */

/**
 * How a confined tool may touch files: `read-only` (no writes at all, not even in its scratch
 * folder), `tempdir` (writes in its scratch folder) or `container` (an explicit executor, such
 * as the jail, confines it).
 */
export const SANDBOX_MODES = Object.freeze(['read-only', 'tempdir', 'container'] as const)

/** One of {@link SANDBOX_MODES}. */
export type SandboxMode = (typeof SANDBOX_MODES)[number]

/** The governance of a confined tool. */
export interface ToolGovernance {
  /** `read` for a `read-only` sandbox, `write` otherwise. */
  readonly sideEffects: 'read' | 'write'
  /** The wall-clock limit of one call. */
  readonly timeoutMs: number
  /** The most bytes of content one call answers. */
  readonly maxBytes: number
  readonly sandbox: {
    readonly mode: SandboxMode
    /** Host paths writes may land in, besides the scratch folder in `tempdir` mode. */
    readonly allowPaths: readonly string[]
  }
}
