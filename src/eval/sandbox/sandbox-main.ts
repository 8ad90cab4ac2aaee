/**
 * @module eval/sandbox/sandbox-main
 * The sandbox process: hosts every session's isolate, apart from the server, so that a V8 out
 * of memory or a native fault ends this process (the server restarts it), never the server.
 * Started by the server with `--no-node-snapshot` (isolated-vm asks for it), an empty
 * environment and an IPC channel; it ends when the channel closes.
 */
import type { HostMessage } from '../sandbox-protocol.ts'
import { SandboxHost } from './sandbox-host.ts'

const send = (message: Record<string, unknown>): void => {
  if (process.connected) process.send?.(message)
}

const host = new SandboxHost(send, (message) => {
  process.stderr.write(`eitri sandbox: catastrophic isolate error: ${message}\n`)
  process.abort()
})

process.on('message', (message: HostMessage) => {
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
})
process.on('disconnect', () => process.exit(0))
send({ type: 'ready', pid: process.pid })
