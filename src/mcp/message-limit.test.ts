import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { idOfCutMessage } from './message-limit.ts'

describe('idOfCutMessage', () => {
  it('finds the id at either end of a cut request, as the SDKs write it', () => {
    assert.equal(idOfCutMessage('{"jsonrpc":"2.0","id":7,"method":"tools/call","par', ''), 7)
    assert.equal(idOfCutMessage('{"id":"a-1","method":"x"', ''), 'a-1')
    assert.equal(
      idOfCutMessage('{"method":"tools/call","params":{"a":"', 'yy"}},"jsonrpc":"2.0","id":12}'),
      12,
    )
  })

  it('answers null for a notification, an id inside the params, or no JSON at all', () => {
    assert.equal(
      idOfCutMessage('{"jsonrpc":"2.0","method":"notifications/x","params":{', 'y"}}'),
      null,
    )
    assert.equal(idOfCutMessage('{"method":"m","params":{"id":3,"c":"', 'y","id":4}}'), null)
    assert.equal(idOfCutMessage('xxxxxxxx', 'yyyy'), null)
  })
})
