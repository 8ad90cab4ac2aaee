/**
 * @module eval/capability-catalog
 * The capabilities a sandbox offers, and the one door every guest call goes through: the
 * function must exist, its arguments must match its schema (checked here, on the host), and a
 * failure reaches the guest as a code and a message with the workspace's host path redacted,
 * never a stack.
 */
import { z } from 'zod'
import { EitriError } from '../errors/eitri-error.ts'
import { describeIssues } from '../tool/validate-input.ts'
import type { Capability, CapabilityFunction, CapabilityScope, EvalScope } from './capability.ts'
import type { CapabilityHandler, NamespaceList } from './eval-engine.ts'
import { MAX_ANSWER_CHARS } from './eval-limits.ts'
import { JsonAnswer } from './json-answer.ts'

/** The capabilities of a sandbox, by namespace. */
export class CapabilityCatalog {
  readonly #capabilities: ReadonlyMap<string, Capability>

  constructor(capabilities: Iterable<Capability>) {
    this.#capabilities = new Map(
      [...capabilities].map((capability) => [capability.name, capability]),
    )
  }

  /** Every capability, in order. */
  list(): Capability[] {
    return [...this.#capabilities.values()]
  }

  /** One capability by name. */
  get(name: string): Capability | undefined {
    return this.#capabilities.get(name)
  }

  /** Namespace → function names, for the guest's globals. */
  namespaces(): NamespaceList {
    return Object.fromEntries(
      this.list().map((capability) => [capability.name, capability.functions.map((fn) => fn.name)]),
    )
  }

  /**
   * Serves one eval's calls with `scope`; each call's context carries that call's signal. A
   * call that reads data reserves its size from the eval's byte budget before reading; every
   * answer is measured and capped as JSON and counted until the sandbox has it.
   */
  handler(scope: EvalScope): CapabilityHandler {
    const { budget, ...shared } = scope
    return async (namespace, name, args, signal) => {
      const fn = this.#capabilities
        .get(namespace)
        ?.functions.find((candidate) => candidate.name === name)
      if (fn === undefined) {
        throw new EitriError(
          'unknown_tool',
          `${namespace}.${name} is not a capability; see sandbox.overview().`,
        )
      }
      const bytes = budget.forCall(signal)
      try {
        // A person asked about a file is told which capability asks.
        const workspace =
          shared.ctx.workspace.forTool?.(`js_eval ${namespace}.${name}`) ?? shared.ctx.workspace
        const callScope: CapabilityScope = {
          ...shared,
          ctx: { ...shared.ctx, signal, workspace },
          bytes,
        }
        const value = await fn.run(checkArguments(namespace, fn, args) as never, callScope)
        const json = value === undefined ? '' : JSON.stringify(value)
        if (json.length > MAX_ANSWER_CHARS) {
          throw new EitriError(
            'limit_exceeded',
            `The answer of ${namespace}.${name} is ${json.length} characters as JSON, over the ${MAX_ANSWER_CHARS} one call may answer; ask for less at a time.`,
          )
        }
        // A call that reserved less than its answer takes (a listing, say) is counted now.
        bytes.atLeast(json.length)
        return new JsonAnswer(json, () => bytes.releaseAll())
      } catch (error) {
        bytes.releaseAll()
        if (EitriError.isInstance(error)) {
          throw new EitriError(error.code, scope.ctx.workspace.redact(error.message))
        }
        // An unexpected failure's message may name host paths or internals: only its errno
        // code (EACCES, ENOSPC, …) crosses.
        const errno = (error as NodeJS.ErrnoException | undefined)?.code
        throw new EitriError(
          'tool_failed',
          `${namespace}.${name} failed unexpectedly${typeof errno === 'string' && /^E[A-Z]+$/.test(errno) ? ` (${errno})` : ''}: a fault of the capability, not of your code.`,
        )
      }
    }
  }
}

function checkArguments(
  namespace: string,
  fn: CapabilityFunction,
  args: readonly unknown[],
): unknown[] {
  // JSON has no undefined: an argument left out in the middle arrives as null.
  const trimmed = [...args]
  while (trimmed.length > 0 && trimmed.at(-1) === null) trimmed.pop()
  const parsed = fn.parameters.safeParse(trimmed)
  if (!parsed.success) {
    throw new EitriError(
      'invalid_input',
      `Invalid arguments for ${namespace}.${fn.signature}:\n${describeIssues(renumber(parsed.error))}`,
    )
  }
  return parsed.data as unknown[]
}

/** Names arguments `argument 1`, `argument 2.path` instead of `[0]`, `[1].path`. */
function renumber(error: z.ZodError): z.ZodError {
  return new z.ZodError(
    error.issues.map((issue) => {
      const [first, ...rest] = issue.path
      return typeof first === 'number'
        ? { ...issue, path: [`argument ${first + 1}`, ...rest] }
        : issue
    }),
  )
}
