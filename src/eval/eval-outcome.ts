/**
 * @module eval/eval-outcome
 * How one eval ended, as every engine reports it. The shapes are declared by the tool layer
 * (`ports/code-evaluator.ts`), which hands them to the `js_eval` tool unchanged.
 */
export type {
  EvalFailure,
  EvalFailureCode,
  EvalOutcome,
  EvalValue,
} from '../ports/code-evaluator.ts'
