/**
 * A read-only session's command and a host program listening in the project, end to end:
 * through `eitri serve --access read-only`, a `shell` command (in the warm jail and as a
 * background job) tries to connect to a unix socket a host program listens on in the
 * workspace, and to write into a named pipe a host program reads there. Through a bind of the
 * workspace it did both (decision 0046); the control is the same connection and write made on
 * the host.
 */
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { it } from 'node:test'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { makeScratch } from './helpers/scratch.ts'
import { connectServe } from './helpers/serve-client.ts'

const ATTACK = [
  `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.settimeout(2); s.connect('host.sock'); print('CONNECTED')" 2>&1 | tail -1`,
  `timeout 2 sh -c 'echo JAILED > host.fifo' || echo no-pipe`,
].join('; ')

it('a read-only command reaches no socket and no pipe of a host program in the workspace', async () => {
  await using scratch = await makeScratch({ 'README.md': 'r\n' })
  const socketPath = path.join(scratch.workspace, 'host.sock')
  let connections = 0
  const server = net.createServer((socket) => {
    connections++
    socket.destroy()
  })
  await new Promise<void>((resolve) => server.listen(socketPath, resolve))
  fs.chmodSync(socketPath, 0o777)
  const pipe = path.join(scratch.workspace, 'host.fifo')
  execFileSync('mkfifo', ['-m', '666', pipe])
  const reader = fs.openSync(pipe, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  const heard = (): string => {
    const buffer = Buffer.alloc(4096)
    try {
      return buffer.subarray(0, fs.readSync(reader, buffer)).toString()
    } catch {
      return ''
    }
  }
  const client = new Client({ name: 'read-only-socket-client', version: '1.0.0' })
  const call = await connectServe(client, scratch, ['--access', 'read-only'])
  try {
    const said: string[] = []
    // The first command starts the warm jail; the next run in it; then a background job.
    for (let index = 0; index < 3; index++)
      said.push((await call('shell', { command: ATTACK })).text)
    // Twice in the background: the second job may run in the jail the first one ran in.
    for (let jobs = 0; jobs < 2; jobs++) {
      const job = await call('shell', { command: ATTACK, background: true })
      const id = job.metadata['id']
      assert.equal(typeof id, 'string', job.text)
      for (let tries = 0; tries < 100; tries++) {
        const output = await call('shell_output', { id })
        said.push(output.text)
        if (output.metadata['running'] !== true) break
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    assert.equal(connections, 0, said.join('\n'))
    assert.equal(heard(), '', said.join('\n'))
    assert.doesNotMatch(said.join('\n'), /CONNECTED/)
    // Control: on the host the same connection and write reach the program.
    await promisify(execFile)('/bin/bash', ['-c', ATTACK.replace('JAILED', 'PLAIN')], {
      cwd: scratch.workspace,
    })
    await new Promise((resolve) => setTimeout(resolve, 100))
    assert.equal(connections, 1)
    assert.equal(heard(), 'PLAIN\n')
  } finally {
    await client.close()
    fs.closeSync(reader)
    server.close()
  }
})
