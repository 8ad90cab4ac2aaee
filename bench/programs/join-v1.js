/* global agent -- a js_eval program: the sandbox gives it `agent` */
// join-v1: hire two agents, wait for both, answer their results in order.
const team = await agent.roster([
  { id: 'left', program: { kind: 'scripted', delayMs: 10, result: 'left' } },
  { id: 'right', program: { kind: 'scripted', delayMs: 30, result: 'right' } },
])
const results = await agent.join([
  await agent.hire(team, 'left', { task: 'the first half' }),
  await agent.hire(team, 'right', { task: 'the second half' }),
])
JSON.stringify(results.map((result) => result.value))
