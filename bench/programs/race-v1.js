/* global agent -- a js_eval program: the sandbox gives it `agent` */
// race-v1: a fast agent against a slow one; the first result wins and the other is cancelled.
const team = await agent.roster([
  { id: 'fast', program: { kind: 'scripted', delayMs: 10, result: 'fast' } },
  { id: 'slow', program: { kind: 'scripted', delayMs: 5000, result: 'slow' } },
])
const slow = await agent.hire(team, 'slow', { task: 'answer' })
const fast = await agent.hire(team, 'fast', { task: 'answer' })
const winner = await agent.race([slow, fast])
JSON.stringify(winner.value)
