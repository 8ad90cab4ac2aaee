import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { evalError, evalValue, evalWorkshop, type EvalWorkshop } from '../test-eval-workshop.ts'

interface Seen {
  readonly host: string | undefined
  readonly url: string | undefined
  readonly authorization: string | undefined
}

const SECRET = 's3cret-value-0451'

describe('the http capability', () => {
  const seen: Seen[] = []
  let server: http.Server
  let port = 0
  before(async () => {
    server = http.createServer((request, response) => {
      seen.push({
        host: request.headers.host,
        url: request.url,
        authorization: request.headers.authorization,
      })
      const url = new URL(request.url ?? '/', 'http://x')
      if (url.pathname === '/redirect') {
        response.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end()
      } else if (url.pathname === '/big') {
        response.end('b'.repeat(5_000))
      } else {
        response.end(`hello from ${url.pathname}`)
      }
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  after(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const open = (config: Record<string, unknown>, loopback = true): Promise<EvalWorkshop> =>
    evalWorkshop({
      config,
      workshop: {
        evaluation: {
          testOnlyAllowLoopback: loopback,
          readVariable: (name) => (name === 'TOKEN' ? SECRET : undefined),
        },
      },
    })
  const fetchOf = (url: string, init = '{}') =>
    `const res = await http.fetch(${JSON.stringify(url)}, ${init}); JSON.stringify({ status: res.status, ok: res.ok, body: res.body, redirected: res.redirected, echo: res.headers['x-echo'] })`

  it('fetches an allowlisted host for real and follows redirects it checks again', async () => {
    await using fixture = await open({ http: { allow: ['127.0.0.1'] } })
    const base = `http://127.0.0.1:${port}`
    assert.deepEqual(JSON.parse(evalValue(await fixture.run(fetchOf(`${base}/hello`)))), {
      status: 200,
      ok: true,
      body: 'hello from /hello',
      redirected: false,
    })
    const redirected = await fixture.run(
      fetchOf(`${base}/redirect?to=${encodeURIComponent(`${base}/final`)}`),
    )
    assert.equal(JSON.parse(evalValue(redirected)).body, 'hello from /final')
    const toUnlisted = await fixture.run(
      fetchOf(`${base}/redirect?to=${encodeURIComponent(`http://localhost:${port}/x`)}`),
    )
    assert.match(
      evalError(toUnlisted, 'eval_error'),
      /\[permission_denied\].*localhost: it is not on the HTTP allowlist/,
    )
  })

  it('re-checks the address of every redirect: metadata and private addresses stay out of reach', async () => {
    await using fixture = await open({ http: { allow: ['127.0.0.1', '169.254.169.254'] } })
    const before = seen.length
    const url = `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}`
    assert.match(
      evalError(await fixture.run(fetchOf(url)), 'eval_error'),
      /\[permission_denied\].*169\.254\.169\.254.*linkLocal/,
    )
    assert.equal(seen.length, before + 1, 'only the first hop reached a server')
  })

  it('refuses loopback without the test-only option, private and link-local addresses, and other schemes', async () => {
    await using fixture = await open(
      {
        http: {
          allow: [
            '127.0.0.1',
            'localhost',
            '169.254.169.254',
            '10.0.0.1',
            '192.168.1.1',
            '100.64.0.1',
            '0.0.0.0',
          ],
        },
      },
      false,
    )
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://localhost:${port}/`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://192.168.1.1/',
      'http://100.64.0.1/',
      'http://0.0.0.0/',
    ]) {
      assert.match(
        evalError(await fixture.run(fetchOf(url)), 'eval_error'),
        /\[permission_denied\].*only reach public addresses/,
        url,
      )
    }
    for (const url of ['file:///etc/passwd', 'ftp://127.0.0.1/x', 'data:text/plain,hi']) {
      assert.match(
        evalError(await fixture.run(fetchOf(url)), 'eval_error'),
        /only http and https/,
        url,
      )
    }
  })

  it('anchors the allowlist: look-alikes and an empty list reach nothing', async () => {
    await using fixture = await open({ http: { allow: ['api.github.com', '*.example.org'] } })
    for (const url of [
      'https://api.github.com.evil.example/',
      'https://evilapi.github.com/',
      'https://github.com/',
      'https://example.org/',
      'https://example.org.evil.example/',
    ]) {
      assert.match(
        evalError(await fixture.run(fetchOf(url)), 'eval_error'),
        /not on the HTTP allowlist/,
        url,
      )
    }
    await using empty = await open({})
    assert.match(
      evalError(await empty.run(fetchOf(`http://127.0.0.1:${port}/`)), 'eval_error'),
      /the allowlist is empty/,
    )
  })

  it('caps the size of a response', async () => {
    await using fixture = await open({ http: { allow: ['127.0.0.1'], maxResponseBytes: 1_000 } })
    assert.match(
      evalError(await fixture.run(fetchOf(`http://127.0.0.1:${port}/big`)), 'eval_error'),
      /\[limit_exceeded\].*over 1000 bytes/,
    )
  })
})
