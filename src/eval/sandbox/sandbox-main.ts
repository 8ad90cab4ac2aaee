/**
 * @module eval/sandbox/sandbox-main
 * The sandbox process: hosts every session's isolate, apart from the server, so that a V8 out
 * of memory or a native fault ends this process (the server restarts it), never the server.
 * Started by the server with `--no-node-snapshot` (isolated-vm asks for it) and an empty
 * environment, inside bubblewrap (no network, no workspace, no file but its own code); it reads the server's JSON lines on stdin (small messages) and fd 5 (large
 * ones), answers in JSON lines on fd 3 (small) and fd 4 (large), and ends when stdin closes.
 */
import { Socket } from 'node:net'
import { LineSplitter } from '../../util/line-splitter.ts'
import { MAX_ANSWER_CHARS, MAX_CODE_CHARS } from '../eval-limits.ts'
import { LineWriter } from '../line-writer.ts'
import { SANDBOX_PIPES, type HostMessage } from '../sandbox-protocol.ts'
import { SandboxHost } from './sandbox-host.ts'

/**
 * Longest line the server sends: an answer (JSON of at most MAX_ANSWER_CHARS characters)
 * written again inside the message's JSON, or the code of an eval.
 */
const MAX_SERVER_LINE_BYTES = 6 * MAX_ANSWER_CHARS + 6 * MAX_CODE_CHARS

const pipe = (fd: number, direction: 'in' | 'out'): Socket => {
  const socket = new Socket({ fd, readable: direction === 'in', writable: direction === 'out' })
  // The server is gone.
  socket.on('error', () => process.exit(0))
  return socket
}

// One session's large calls must not hold back another's result or the answer to a ping.
const writer = new LineWriter({
  small: pipe(SANDBOX_PIPES.smallToServer, 'out'),
  large: pipe(SANDBOX_PIPES.largeToServer, 'out'),
})
const send = (message: Record<string, unknown>, key?: string): void => {
  writer.write(message, key === undefined ? {} : { key })
}

const host = new SandboxHost(send, (message) => {
  process.stderr.write(`eitri sandbox: catastrophic isolate error: ${message}\n`)
  process.abort()
})

function receive(message: HostMessage): void {
  if (message.type === 'stats') {
    send({
      type: 'stats',
      requestId: message.requestId,
      rss: process.memoryUsage().rss,
      sessions: host.size,
    })
    return
  }
  void host.handle(message).catch((error: unknown) => {
    process.stderr.write(`eitri sandbox: ${(error as Error).stack ?? String(error)}\n`)
  })
}

const fromServer = (): LineSplitter =>
  new LineSplitter(MAX_SERVER_LINE_BYTES, {
    // The server is trusted: its lines are its own JSON.
    line: (line) => receive(JSON.parse(line) as HostMessage),
    overflow: () => {
      process.stderr.write('eitri sandbox: a line from the server was too long\n')
      process.exit(1)
    },
  })
const small = fromServer()
process.stdin.on('data', (chunk: Buffer) => small.push(chunk))
process.stdin.on('end', () => process.exit(0))
process.stdin.on('error', () => process.exit(0))
const large = fromServer()
pipe(SANDBOX_PIPES.largeToSandbox, 'in').on('data', (chunk: Buffer) => large.push(chunk))
send({ type: 'ready', pid: process.pid })
