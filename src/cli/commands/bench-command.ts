/**
 * @module cli/commands/bench-command
 * `eitri bench --env ENV --model PROVIDER:MODEL`: one program-bench environment with an llm
 * root agent on that model, in a fresh scratch workshop; prints the verifier's reward and
 * checks, the model steps, dollars and time. `--model scripted` plays the environment's own
 * script and needs no key; a real provider is resolved as `eitri run` resolves it, from the
 * configuration (`--config`, else the default file: its `providers`, `prices` and
 * `contextWindows`) and the built-in providers, its key read from the environment.
 */
import path from 'node:path'
import { runEnvironment, type BenchReport } from '../../bench/bench-environment.ts'
import { ENVIRONMENTS } from '../../bench/environments.ts'
import { SCRIPTED_MODEL, scriptedCatalog } from '../../bench/scripted-catalog.ts'
import { loadConfig } from '../../config/config-file.ts'
import { readEnvironment } from '../../config/environment.ts'
import { createModelCatalog } from '../../provider/create-model-catalog.ts'
import type { CliIo } from '../cli-io.ts'
import { EXIT_FAILURE, EXIT_OK, UsageError } from '../cli-io.ts'
import type { CommandLine } from '../parse-command-line.ts'

const NAMES = Object.keys(ENVIRONMENTS).join(' | ')

/** Runs the environment; exit status 0 for reward 1, 1 for reward 0. */
export async function benchCommand(
  line: CommandLine,
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  if (line.positionals.length > 0) {
    throw new UsageError(`bench takes no arguments (extra: ${line.positionals.join(' ')})`)
  }
  // Own names only: `--env constructor` must not find Object's.
  const env =
    line.env === undefined || !Object.hasOwn(ENVIRONMENTS, line.env)
      ? undefined
      : ENVIRONMENTS[line.env]
  if (env === undefined) {
    throw new UsageError(
      `bench needs --env, one of: ${NAMES}${line.env === undefined ? '' : ` (not ${JSON.stringify(line.env)})`}`,
    )
  }
  const model = line.model
  if (model === undefined || model === '') {
    throw new UsageError(
      `bench needs --model PROVIDER:MODEL (such as anthropic:claude-sonnet-4-20250514), or --model ${SCRIPTED_MODEL} for the environment's own script`,
    )
  }
  let catalog
  let ref
  if (model === SCRIPTED_MODEL) {
    catalog = scriptedCatalog(env)
    ref = `${SCRIPTED_MODEL}:${env.name}`
  } else {
    const colon = model.indexOf(':')
    if (colon <= 0 || colon === model.length - 1) {
      throw new UsageError(
        `--model ${JSON.stringify(model)} is not PROVIDER:MODEL (such as openai:gpt-4o-mini) or ${SCRIPTED_MODEL}`,
      )
    }
    const config = await loadConfig(path.resolve(line.config ?? readEnvironment().configPath))
    catalog = createModelCatalog({
      providers: config.providers,
      prices: config.prices,
      contextWindows: config.contextWindows,
    })
    // Resolved once before any workshop opens: a missing key is refused here, naming its variable.
    catalog.resolve({ provider: model.slice(0, colon), model: model.slice(colon + 1) })
    ref = model
  }
  const report = await runEnvironment(env, { catalog, model: ref, signal })
  io.stdout(line.json ? `${JSON.stringify(report, null, 2)}\n` : summary(report))
  return report.reward === 1 ? EXIT_OK : EXIT_FAILURE
}

/** The report as a person reads it. */
function summary(report: BenchReport): string {
  const checks = report.checks.map(
    (entry) => `  ${entry.ok ? 'ok  ' : 'FAIL'} ${entry.name}: ${entry.detail}\n`,
  )
  return (
    `${report.env} on ${report.model}: reward ${report.reward}\n` +
    checks.join('') +
    `steps ${report.steps}, dollars ${report.dollars.toFixed(6)}, time ${report.ms} ms, ` +
    `tokens ${report.usage.inputTokens} in / ${report.usage.outputTokens} out, inputs ${report.inputsId ?? '-'}\n`
  )
}
