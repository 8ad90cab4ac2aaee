import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { makeScratch } from '../../../test/helpers/scratch.ts'
import { openWorkshop, type Workshop } from '../../workshop/workshop.ts'

async function workshopOn(files: Record<string, string> = {}, bwrap?: string, config?: object) {
  const scratch = await makeScratch(files)
  if (config !== undefined) await fs.writeFile(scratch.configPath, JSON.stringify(config))
  const workshop = await openWorkshop({
    workspace: scratch.workspace,
    stateDir: scratch.stateDir,
    configPath: scratch.configPath,
    ...(bwrap === undefined ? {} : { bwrap }),
  })
  const availability = await workshop.jail.availability()
  if (bwrap === undefined) {
    assert.ok(
      availability.available,
      availability.available
        ? ''
        : `install bubblewrap (apt-get install bubblewrap): ${availability.reason}`,
    )
  }
  return {
    scratch,
    workshop,
    [Symbol.asyncDispose]: async () => {
      await workshop.close()
      await scratch.cleanup()
    },
  }
}

async function waitFor(workshop: Workshop, id: string, text: RegExp): Promise<string> {
  let seen = ''
  for (let waited = 0; waited < 15_000; waited += 50) {
    seen += (await workshop.call('shell_output', { id })).content
    if (text.test(seen)) return seen
    await delay(50)
  }
  throw new Error(`never saw ${text} in: ${seen}`)
}

describe('shell', () => {
  it('runs bash in the jail at /workspace and answers exit code, stdout and stderr', async () => {
    await using fixture = await workshopOn({ 'a.txt': 'alpha\n' })
    const result = await fixture.workshop.call('shell', {
      command: 'pwd; cat a.txt; echo warn >&2; exit 4',
    })
    assert.equal(result.type, 'success')
    assert.equal(result.content, '/workspace\nalpha\n\nstderr:\nwarn\n\n[exit 4]')
    assert.deepEqual(
      {
        exitCode: result.metadata['exitCode'],
        timedOut: result.metadata['timedOut'],
        truncated: result.metadata['truncated'],
      },
      { exitCode: 4, timedOut: false, truncated: false },
    )
  })

  it('refuses a denied command before anything runs: permission_denied, exit 126, the rule', async () => {
    await using fixture = await workshopOn()
    const result = await fixture.workshop.call('shell', { command: 'touch ran.txt; sudo id' })
    assert.equal(result.type === 'error' && result.code, 'permission_denied')
    assert.match(result.content, /^permit denied: .*sudo.* \(exit 126\)$/)
    assert.deepEqual([result.metadata['exitCode'], result.metadata['rule']], [126, 'privilege'])
    await assert.rejects(
      fs.access(path.join(fixture.scratch.workspace, 'ran.txt')),
      'no part of it ran',
    )
  })

  it('refuses what needs a person (ask) while no approver exists, and loses nothing', async () => {
    await using fixture = await workshopOn({ 'keep.txt': 'k' })
    const result = await fixture.workshop.call('shell', { command: 'rm -rf .' })
    assert.equal(result.type === 'error' && result.code, 'permission_denied')
    assert.equal(result.metadata['needsApproval'], true)
    assert.match(result.content, /approv/)
    assert.equal(await fs.readFile(path.join(fixture.scratch.workspace, 'keep.txt'), 'utf8'), 'k')
  })

  it('lands writes in the workspace', async () => {
    await using fixture = await workshopOn()
    const result = await fixture.workshop.call('shell', {
      command: 'mkdir -p out && echo built > out/app.js',
    })
    assert.equal(result.metadata['exitCode'], 0, result.content)
    assert.equal(
      await fs.readFile(path.join(fixture.scratch.workspace, 'out/app.js'), 'utf8'),
      'built\n',
    )
  })

  it('answers a timeout as error code timeout with exit 124, and how to let it finish', async () => {
    await using fixture = await workshopOn()
    const result = await fixture.workshop.call('shell', {
      command: 'echo before; sleep 30',
      timeout_s: 0.5,
    })
    assert.equal(result.type === 'error' && result.code, 'timeout')
    assert.match(
      result.content,
      /^before\n\n\[timed out after 0\.5 s and stopped with everything it started; what it printed until then is above\. To let it finish: run it again with a longer timeout_s \(up to 600\), or start it with background: true and read its output with shell_output while it runs\.\] \(exit 124\)$/,
    )
    assert.equal(result.metadata['exitCode'], 124)
  })

  it('on a timeout, answers the beginning and the end of what the command printed so far', async () => {
    await using fixture = await workshopOn()
    const result = await fixture.workshop.call('shell', {
      command: 'seq 8000 | sed "s/.*/test & ok/"; echo "still running"; sleep 30',
      timeout_s: 2,
    })
    assert.equal(result.type === 'error' && result.code, 'timeout')
    assert.match(result.content, /^test 1 ok\ntest 2 ok\n/)
    assert.match(result.content, /\[\.\.\. \d+ characters dropped here/)
    assert.match(result.content.slice(-400), /test 8000 ok\nstill running\n\n\[timed out after 2 s/)
  })

  it('interrupts a command at its deadline before stopping it, so it can print its summary', async () => {
    await using fixture = await workshopOn()
    const result = await fixture.workshop.call('shell', {
      command:
        'trap \'echo "summary: 2 passed, 1 still running"; exit 130\' INT; echo started; sleep 30 & wait',
      timeout_s: 1,
    })
    assert.equal(result.type === 'error' && result.code, 'timeout')
    assert.match(result.content, /^started\nsummary: 2 passed, 1 still running\n\n\[timed out/)
  })

  it('says so when nothing was printed before the timeout', async () => {
    await using fixture = await workshopOn()
    const result = await fixture.workshop.call('shell', { command: 'sleep 30', timeout_s: 0.5 })
    assert.match(result.content, /^\(no output before the timeout\)\n\n\[timed out after 0\.5 s/)
  })

  it('does not count the time spent preparing the jail against the timeout', async () => {
    // Many files make the first call's preparation (the copy into the jail, starting it) slow.
    const files = Object.fromEntries(
      Array.from({ length: 1500 }, (_, index) => [`src/file-${index}.txt`, `content ${index}\n`]),
    )
    await using fixture = await workshopOn(files)
    const started = performance.now()
    const result = await fixture.workshop.call('shell', {
      command: 'sleep 1.2; ls src | wc -l',
      timeout_s: 2,
    })
    assert.equal(
      result.type,
      'success',
      `${result.content} after ${performance.now() - started} ms`,
    )
    assert.match(result.content, /^1500\n/)
  })

  it('collapses a flood of identical lines so the end of a failing command shows', async () => {
    await using fixture = await workshopOn()
    const result = await fixture.workshop.call('shell', {
      command:
        'echo "running 3 suites"; for i in $(seq 20000); do echo "Error: connect ECONNREFUSED 127.0.0.1:5432"; done; echo "Tests: 3 failed, 12 passed"; exit 1',
    })
    assert.equal(
      result.content,
      'running 3 suites\nError: connect ECONNREFUSED 127.0.0.1:5432\n[... the line above repeated 19999 more times]\nTests: 3 failed, 12 passed\n\n[exit 1]',
    )
  })

  it('names the memory limit when a command goes over it (jail.memoryBytes), and not under it', async () => {
    await using fixture = await workshopOn({}, undefined, { jail: { memoryBytes: 256 * 2 ** 20 } })
    // perl (essential on Debian) builds a 512 MiB string.
    const over = await fixture.workshop.call('shell', {
      command: 'perl -e \'$x = "a" x (512 * 2**20); print length $x\'',
    })
    assert.match(
      over.content,
      /\[stopped: (used more than|ran out of memory under) the 256 MiB memory limit \((all its processes together, a memory cgroup|per process, RLIMIT_DATA, as no memory cgroup can be created here)\).*raise jail\.memoryBytes in eitri's configuration\.\]/,
    )
    // The control: the same program under the limit completes.
    const under = await fixture.workshop.call('shell', {
      command: 'perl -e \'$x = "a" x (64 * 2**20); print length $x\'',
    })
    assert.equal(under.content, '67108864\n\n[exit 0]')
  })

  it('answers a missing jail with jail_unavailable, the reason and the fix', async () => {
    await using fixture = await workshopOn({}, '/nonexistent/bwrap')
    const result = await fixture.workshop.call('shell', { command: 'echo hi > ran.txt' })
    assert.equal(result.type === 'error' && result.code, 'jail_unavailable')
    assert.match(
      result.content,
      /bubblewrap \(bwrap\) is not installed.*apt-get install bubblewrap/,
    )
    await assert.rejects(fs.access(path.join(fixture.scratch.workspace, 'ran.txt')))
  })

  it('refuses background together with escalate, and runs nothing', async () => {
    await using fixture = await workshopOn()
    const result = await fixture.workshop.call('shell', {
      command: 'touch ran.txt',
      background: true,
      escalate: { reason: 'x' },
    })
    assert.equal(result.type === 'error' && result.code, 'invalid_input')
    assert.match(result.content, /background jobs always run in the jail/)
    await assert.rejects(fs.access(path.join(fixture.scratch.workspace, 'ran.txt')))
  })

  it('validates its input', async () => {
    await using fixture = await workshopOn()
    const result = await fixture.workshop.call('shell', { command: '', timeout_s: -1 })
    assert.equal(result.type === 'error' && result.code, 'invalid_input')
    assert.match(result.content, /- command: /)
    assert.match(result.content, /- timeout_s: /)
  })

  it('runs a background job, reads its output since the last read, and kills it with everything it started', async () => {
    await using fixture = await workshopOn()
    const started = await fixture.workshop.call('shell', {
      command:
        'echo ready; (sleep 1000 & sleep 1000 & wait) & while true; do echo tick; sleep 0.1; done',
      background: true,
    })
    assert.equal(started.type, 'success', started.content)
    const id = started.metadata['id'] as string
    assert.match(id, /^job-\d+$/)
    await waitFor(fixture.workshop, id, /ready/)
    const later = await waitFor(fixture.workshop, id, /tick/)
    assert.doesNotMatch(
      later.split('tick')[1] ?? '',
      /ready/,
      'output already read is not repeated',
    )
    const running = await fixture.workshop.call('shell_output', { id })
    assert.equal(running.metadata['running'], true)
    const killed = await fixture.workshop.call('shell_kill', { id })
    assert.equal(killed.type, 'success')
    assert.match(killed.content, new RegExp(`^Killed ${id}`))
    const gone = await fixture.workshop.call('shell_output', { id })
    assert.equal(gone.type === 'error' && gone.code, 'not_running')
  })

  it('says a background job that failed for want of the network did so, and what to do', async () => {
    await using fixture = await workshopOn()
    const npm = (code: string) =>
      `echo "npm error code ${code}" >&2; echo "npm error request to https://registry.npmjs.org/x failed" >&2; exit 1`
    const answers: string[] = []
    for (const code of ['ENOTCACHED', 'E404']) {
      const started = await fixture.workshop.call('shell', { command: npm(code), background: true })
      answers.push(await waitFor(fixture.workshop, started.metadata['id'] as string, /exited/))
    }
    assert.match(
      answers[0] ?? '',
      /exited with 1\]\n\n\[the jail has no network: npm is told it is offline/,
    )
    // Positive control: another npm failure gets no such note.
    assert.doesNotMatch(answers[1] ?? '', /no network/)
  })

  it('says so for a program other than npm that found no host (Python, as pip does)', async () => {
    await using fixture = await workshopOn()
    const python = (url: string) =>
      `python3 -c "import urllib.request; urllib.request.urlopen('${url}', timeout=5)"`
    const offline = await fixture.workshop.call('shell', { command: python('http://example.com') })
    assert.match(offline.content, /Temporary failure in name resolution|Network is unreachable/)
    assert.match(offline.content, /\[the jail has no network: .*pip, curl or git find no host/)
    // Positive control: the same program failing otherwise gets no such note.
    const other = await fixture.workshop.call('shell', { command: python('not-a-url') })
    assert.match(other.content, /unknown url type/)
    assert.doesNotMatch(other.content, /no network/)
  })

  it('says a job wanted the network also when its failure was read while it still ran', async () => {
    await using fixture = await workshopOn()
    // Fails seconds after it printed why: the failure is read while it runs, its exit later
    // with no new output.
    const started = await fixture.workshop.call('shell', {
      command: 'echo "npm error code ENOTCACHED" >&2; sleep 5; exit 1',
      background: true,
    })
    const id = started.metadata['id'] as string
    const early = await waitFor(fixture.workshop, id, /ENOTCACHED/)
    assert.match(early, /is running\]/)
    const exited = await waitFor(fixture.workshop, id, /exited/)
    assert.match(
      exited,
      /\(no new output\)\n\n\[job-\d+ exited with 1\]\n\n\[the jail has no network/,
    )
  })

  it('stops background jobs started with wider access when the mode narrows, and says so', async () => {
    await using fixture = await workshopOn()
    const started = await fixture.workshop.call('shell', {
      command: 'sleep 1000',
      background: true,
    })
    const id = started.metadata['id'] as string
    const narrowed = await fixture.workshop.call('mode_set', { mode: 'plan' })
    assert.equal(narrowed.type, 'success')
    assert.match(
      narrowed.content,
      new RegExp(`Stopped background jobs started with wider access: ${id}`),
    )
    const gone = await fixture.workshop.call('shell_output', { id })
    assert.equal(gone.type === 'error' && gone.code, 'not_running')
  })

  it('ends background jobs, and everything they started, when the session closes', async () => {
    await using fixture = await workshopOn()
    const session = await fixture.workshop.openSession()
    const marker = `eitri-marker-${process.pid}-${Date.now()}`
    const result = await fixture.workshop.toolset.run(
      {
        name: 'shell',
        input: {
          command: `(setsid sleep 1000 &); while true; do : ${marker}; sleep 0.05; done`,
          background: true,
        },
      },
      session.context(),
    )
    assert.equal(result.type, 'success')
    for (let waited = 0; (await processesWith(marker)) === 0 && waited < 10_000; waited += 50)
      await delay(50)
    assert.ok((await processesWith(marker)) > 0, 'the job runs')
    await session.close()
    assert.equal(await processesWith(marker), 0, 'no process of the job survives')
  })
})

/** How many host processes have `marker` in their command line. */
async function processesWith(marker: string): Promise<number> {
  let count = 0
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const commandLine = await fs.readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')
    if (commandLine.includes(marker) && !commandLine.includes('--test')) count++
  }
  return count
}
