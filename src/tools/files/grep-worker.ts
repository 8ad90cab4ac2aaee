/**
 * @module tools/files/grep-worker
 * The worker thread that matches a large file for grep (`grep-matching.ts`), so the server's
 * thread stays free and the match can be ended at the grep's deadline.
 */
import { parentPort } from 'node:worker_threads'
import { compilePattern, matchText, type MatchJob } from './grep-matching.ts'

const decoder = new TextDecoder()

parentPort?.on('message', (job: MatchJob) => {
  const regex = compilePattern(job.pattern, job.ignoreCase)
  parentPort?.postMessage(matchText(regex, decoder.decode(job.bytes), job.keep))
})
