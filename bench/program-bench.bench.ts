/**
 * program-bench level 1: `join-v1` and `race-v1` run as js_eval programs of a root Run, each
 * scored by the trusted verifier (reward 1 only when every durable check passes).
 */
import { levelOneTasks, runTask } from './programs/program-bench.ts'

for (const task of await levelOneTasks()) {
  const verdict = await runTask(task)
  process.stdout.write(`${verdict.task}: reward ${verdict.reward} in ${verdict.ms} ms\n`)
  for (const check of verdict.checks) {
    process.stdout.write(`  ${check.ok ? 'ok  ' : 'FAIL'} ${check.name}: ${check.detail}\n`)
  }
}
