/**
 * @module agent/llm/llm-program
 * The `llm` program kind. Its factory runs at hire time, before anything is written, and
 * refuses a hire that could not run: a model the catalog cannot resolve, a model with no known
 * price (a dollar budget is never guessed), limits above the program's, a child budget above
 * what its parent has left, or a budget that cannot pay for the first model call. A child's
 * budget is carved out of its parent's remainder while it runs. Hires are checked with the
 * catalog's facts alone; the loop (and with it the AI SDK) is loaded by the first Run, so a
 * process that hires no llm agent never loads it.
 */
import { visibleText } from '../../access/visible-text.ts'
import { EitriError } from '../../errors/eitri-error.ts'
import type {
  ModelCatalog,
  ModelFacts,
  ModelPolicy,
  ModelPrice,
  ResolvedModel,
} from '../../provider/model-catalog.ts'
import type { Store } from '../../store/store.ts'
import type { AgentDef } from '../agent-def.ts'
import {
  DEFAULT_BUDGET_DOLLARS,
  DEFAULT_MAX_MODEL_STEPS,
  type AgentProgram,
} from '../agent-program.ts'
import type { Program, ProgramFactory, ProgramHire } from '../program.ts'
import { systemPrompt, taskMessage } from './harness-prompt.ts'
import { LlmModelRun } from './llm-model-run.ts'
import type { CompactionSettings } from './llm-loop.ts'
import {
  BudgetLedger,
  DEFAULT_MAX_OUTPUT_TOKENS,
  dollarsText,
  estimateTokens,
  reservationDollars,
} from './model-budget.ts'

/** What the llm programs of a runtime need. */
export interface LlmProgramOptions {
  /** Resolves each definition's `modelPolicy`. */
  readonly catalog: ModelCatalog
  /** Where Runs keep their metrics and chats: the runtime's store. */
  readonly store: Store
  /** The output allowance of each model call. @default 4096 */
  readonly maxOutputTokens?: number | undefined
  /** Told when a metrics or chat write fails and is being retried. */
  readonly onStoreRetry?: ((message: string, error: unknown) => void) | undefined
}

type LlmProgram = Extract<AgentProgram, { kind: 'llm' }>

/** How far a child's budget may read above what its parent has left, in dollars (rounding). */
const HALF_MICRO_DOLLAR = 0.5e-6

/**
 * The factory of `llm` programs, for an agent runtime's `programs` (runtimes may share one). Each
 * program carries its Run's ledger (`Program.budget`), which the runtime hands to the Run's
 * children as theirs to carve from.
 *
 * @example
 * new AgentRuntime({ ...options, programs: { ...DETERMINISTIC_PROGRAMS, llm: llmProgramFactory({ catalog, store }) } })
 */
export function llmProgramFactory(options: LlmProgramOptions): ProgramFactory {
  const maxOutputTokens = options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS
  return (def, hire) => {
    const plan = planHire(def, hire, options.catalog, maxOutputTokens)
    const ledger = new BudgetLedger(plan.budget, plan.parentLedger)
    const modelRun = new LlmModelRun({
      def: { ...def, modelPolicy: { provider: plan.provider, model: plan.modelName } },
      ledger,
      price: plan.price,
      ref: `${plan.provider}:${plan.modelName}`,
    })
    return {
      modelRun,
      // The runtime keeps it with the Run: its children's budgets come out of it.
      budget: ledger,
      async run(context) {
        const parent = plan.parentLedger
        if (parent !== undefined) {
          // The parent may have spent or reserved since the hire was checked (its next model
          // call, as a child hired without waiting starts): a child given no budget of its own
          // takes what it may of what is left now; one that cannot pay its first call, or was
          // given a budget no longer there, has nothing.
          const budget = plan.budgetGiven ? plan.budget : Math.min(plan.budget, parent.remaining)
          if (budget + 1e-12 < plan.firstCall || !parent.carve(budget)) {
            return { status: 'waiting', reason: 'budget-exhausted' }
          }
          ledger.lowerTotal(budget)
        }
        try {
          keepWarningsOffStdout()
          const [{ runLlmLoop }, model, compaction] = await Promise.all([
            import('./llm-loop.ts'),
            priced(options.catalog, plan.policy, plan.price),
            plan.compaction === undefined
              ? undefined
              : priced(options.catalog, plan.compaction.policy, plan.compaction.price).then(
                  (summariser): CompactionSettings => ({
                    contextWindow: plan.compaction?.contextWindow ?? 0,
                    model: summariser,
                  }),
                ),
          ])
          return await runLlmLoop(context, {
            model,
            provider: plan.provider,
            modelName: plan.modelName,
            maxModelSteps: plan.maxModelSteps,
            maxOutputTokens,
            ledger,
            modelRun,
            compaction,
            store: options.store,
            onStoreRetry: options.onStoreRetry,
          })
        } finally {
          ledger.end()
        }
      },
    } satisfies Program
  }
}

/**
 * Prints the AI SDK's warnings (a setting the provider does not support, say) as one line each
 * on stderr, named as eitri's, and pinned there: stdout is the MCP channel of `eitri serve` and
 * the value of `eitri run`, so nothing of a model's may ever reach it. Control characters show as
 * escapes (`visibleText`), as in everything eitri prints for a person. A logger the host set
 * is kept.
 */
function keepWarningsOffStdout(): void {
  globalThis.AI_SDK_LOG_WARNINGS ??= ({ warnings, provider, model }) => {
    for (const warning of warnings) {
      process.stderr.write(
        visibleText(
          `eitri: model warning${provider === undefined ? '' : ` (${provider}${model === undefined ? '' : `:${model}`})`}: ${JSON.stringify(warning)}\n`,
        ),
      )
    }
  }
}

/** A model resolved for a Run, at the price its hire was checked with. */
async function priced(
  catalog: ModelCatalog,
  policy: ModelPolicy,
  price: ModelPrice,
): Promise<ResolvedModel & { readonly price: ModelPrice }> {
  return { ...(await catalog.resolve(policy)), price }
}

/** How a checked hire's Run is compacted: its window, and the summarising model. */
interface CompactionPlan {
  readonly contextWindow: number
  readonly policy: ModelPolicy
  readonly price: ModelPrice
}

/** What a checked hire runs with. */
interface LlmHirePlan {
  readonly policy: ModelPolicy
  readonly price: ModelPrice
  readonly provider: string
  readonly modelName: string
  readonly maxModelSteps: number
  readonly budget: number
  /** The hire named its budget (`limits.budgetDollars`): it is carved whole or not at all. */
  readonly budgetGiven: boolean
  /** The most the first model call may cost. */
  readonly firstCall: number
  readonly parentLedger: BudgetLedger | undefined
  readonly compaction: CompactionPlan | undefined
}

/** Checks a hire of `def`; throws a refusal naming the fix. */
function planHire(
  def: AgentDef,
  hire: ProgramHire,
  catalog: ModelCatalog,
  maxOutputTokens: number,
): LlmHirePlan {
  const program = def.program as LlmProgram
  const policy = def.modelPolicy
  if (policy === undefined) {
    throw refused('modelPolicy', `agent "${def.id}" runs an llm program but names no modelPolicy`)
  }
  let model: ModelFacts
  try {
    model = catalog.describe(policy)
  } catch (error) {
    if (EitriError.isInstance(error)) {
      throw new EitriError(error.code, `Hire refused, no Run admitted: ${error.message}`, {
        cause: error,
        data: { field: 'modelPolicy' },
      })
    }
    throw error
  }
  const price = model.price
  if (price === undefined) {
    throw refused(
      'modelPolicy',
      `model ${model.ref} has no known price, so a dollar budget cannot be kept on it; add its price to the configuration's "prices", such as "prices": {"${model.ref}": {"input": 1, "output": 2}} (dollars per million tokens)`,
    )
  }
  const { limits } = hire.request
  const programSteps = program.maxModelSteps ?? DEFAULT_MAX_MODEL_STEPS
  if (limits.maxModelSteps !== undefined && limits.maxModelSteps > programSteps) {
    throw refused(
      'limits.maxModelSteps',
      `${limits.maxModelSteps} is above the ${programSteps} model steps agent "${def.id}" allows; ask for at most ${programSteps}`,
    )
  }
  const programBudget = program.budgetDollars ?? DEFAULT_BUDGET_DOLLARS
  if (limits.budgetDollars !== undefined && limits.budgetDollars > programBudget) {
    throw refused(
      'limits.budgetDollars',
      `$${limits.budgetDollars} is above the $${programBudget} agent "${def.id}" may spend; ask for at most $${programBudget}`,
    )
  }
  let budget = limits.budgetDollars ?? programBudget
  // A child's budget comes out of its parent Run's, a root Run's out of its session's: the
  // runtime hands over the ledger (see ProgramHire.budget).
  const parentLedger = hire.budget
  const fromSession = hire.parentRun === undefined
  if (parentLedger !== undefined) {
    const left = parentLedger.remaining
    // Within half a micro-dollar is what is left: tools see a budget in whole micro-dollars
    // (`budget`, spawn_agent's default), rounded, so "all that is left" may read a hair above it.
    if (limits.budgetDollars !== undefined && limits.budgetDollars > left + HALF_MICRO_DOLLAR) {
      throw refused(
        'limits.budgetDollars',
        fromSession
          ? `$${limits.budgetDollars} is above the $${dollarsText(left)} this session's Runs have left of $${dollarsText(parentLedger.total)} (runs.sessionBudgetDollars in the configuration); ask for at most that, or raise it there`
          : `$${limits.budgetDollars} is above the $${dollarsText(left)} the parent Run has left; a child's budget comes out of its parent's, so ask for at most that`,
      )
    }
    // Without an explicit budget a child gets what it may spend, up to what its parent has left.
    budget = Math.min(budget, left)
  }
  const firstCall = reservationDollars(
    price,
    estimateTokens(systemPrompt(def)) + estimateTokens(taskMessage(hire.request.task)),
    maxOutputTokens,
  )
  if (firstCall > budget) {
    throw refused(
      'limits.budgetDollars',
      `a budget of $${dollarsText(budget)} cannot pay for the first model call (up to $${dollarsText(firstCall)} for its prompt and ${maxOutputTokens} output tokens at ${model.ref}'s prices); give a larger budget${parentLedger === undefined ? '' : fromSession ? ` (this session's Runs have $${dollarsText(parentLedger.remaining)} left of $${dollarsText(parentLedger.total)}: runs.sessionBudgetDollars in the configuration)` : ' (its parent has too little left)'}`,
    )
  }
  return {
    policy: { provider: policy.provider, model: policy.model },
    price,
    compaction: compactionOf(program, policy, { ...model, price }, catalog),
    provider: policy.provider,
    modelName: policy.model,
    maxModelSteps: limits.maxModelSteps ?? programSteps,
    budget,
    budgetGiven: limits.budgetDollars !== undefined,
    firstCall,
    parentLedger,
  }
}

/**
 * How a Run of `program` is compacted: when `autoCompact` is not false and the model's context
 * window is known, by the program's `compactionModel` (which needs a known price too) or the
 * Run's own model.
 */
function compactionOf(
  program: LlmProgram,
  modelPolicy: ModelPolicy,
  model: ModelFacts & { readonly price: ModelPrice },
  catalog: ModelCatalog,
): CompactionPlan | undefined {
  if (program.autoCompact === false || model.contextWindow === undefined) return undefined
  if (program.compactionModel === undefined) {
    return { contextWindow: model.contextWindow, policy: modelPolicy, price: model.price }
  }
  const colon = program.compactionModel.indexOf(':')
  const policy = {
    provider: program.compactionModel.slice(0, colon),
    model: program.compactionModel.slice(colon + 1),
  }
  let summariser: ModelFacts
  try {
    summariser = catalog.describe(policy)
  } catch (error) {
    if (EitriError.isInstance(error)) {
      throw new EitriError(error.code, `Hire refused, no Run admitted: ${error.message}`, {
        cause: error,
        data: { field: 'program.compactionModel' },
      })
    }
    throw error
  }
  if (summariser.price === undefined) {
    throw refused(
      'program.compactionModel',
      `compaction model ${summariser.ref} has no known price, so its summaries cannot be paid for from the budget; add its price to the configuration's "prices"`,
    )
  }
  return { contextWindow: model.contextWindow, policy, price: summariser.price }
}

function refused(field: string, reason: string): EitriError {
  return new EitriError('invalid_input', `Hire refused, no Run admitted: ${reason}.`, {
    data: { field },
  })
}
