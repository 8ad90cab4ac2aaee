/**
 * Test support: the `initialize` request a raw JSON-RPC client (no SDK) sends to `eitri serve`,
 * over stdio or HTTP, so the protocol version the tests speak is written once.
 */

/** The `initialize` request with the id `id`. */
export function rawInitialize(id: number): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'raw', version: '0' },
    },
  }
}
