/**
 * @module workshop/lazy-eval-sandbox
 * The workshop's code sandbox, loaded at the first eval: its modules (the engine's host side,
 * the capabilities, the HTTP client they bring) are about a tenth of what a workshop imports,
 * and a command that evaluates nothing (`eitri exec`, most of `eitri call`) should not pay for
 * them at start.
 */
import { EitriError } from '../errors/eitri-error.ts'
import type { EvalAnswer, EvalRequest } from '../ports/code-evaluator.ts'
import type { CodeEvaluator } from '../ports/code-evaluator.ts'
import type { ToolContext } from '../tool/tool-context.ts'
import type { Toolset } from '../tool/toolset.ts'
import type { EvalOwner, EvalPool } from '../eval/eval-pool.ts'

/** One caller's evals: what a session evaluates through, and ends when it closes. */
export interface SessionEvaluator extends CodeEvaluator<ToolContext> {
  /** Ends this caller's eval sessions. Idempotent. */
  close(): Promise<void>
}

/** The sandbox as a workshop's sessions see it. */
export interface EvalSandbox {
  /** A new caller; `toolset` narrows what its evals' `tools.call` may run. */
  owner(options?: { readonly toolset?: Toolset | undefined }): SessionEvaluator
  /** Ends every caller's sessions and the engine. Idempotent. */
  close(): Promise<void>
}

/** A sandbox that `load`s the real pool at the first eval of any of its callers. */
export function lazyEvalSandbox(load: () => Promise<EvalPool>): EvalSandbox {
  let pool: Promise<EvalPool> | undefined
  let closed = false
  const loaded = (): Promise<EvalPool> => {
    if (closed) return Promise.reject(closedError())
    pool ??= load()
    // A load that failed (a module that cannot be read) is tried again at the next eval.
    pool.catch(() => (pool = undefined))
    return pool
  }
  return {
    owner(options = {}) {
      let owner: Promise<EvalOwner> | undefined
      let ended = false
      return {
        async evaluate(request: EvalRequest, ctx: ToolContext): Promise<EvalAnswer> {
          if (ended) throw closedError()
          owner ??= loaded().then((real) => real.owner(options))
          owner.catch(() => (owner = undefined))
          return (await owner).evaluate(request, ctx)
        },
        async close() {
          ended = true
          await (await owner?.catch(() => undefined))?.close()
        },
      }
    },
    async close() {
      if (closed) return
      closed = true
      await (await pool?.catch(() => undefined))?.close()
    },
  }
}

function closedError(): EitriError {
  return new EitriError('not_available', 'These eval sessions are closed.')
}
