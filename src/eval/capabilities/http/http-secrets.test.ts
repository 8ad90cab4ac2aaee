import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import tls from 'node:tls'
import { evalError, evalValue, evalWorkshop, type EvalWorkshop } from '../test-eval-workshop.ts'

/** Upper and lower case, and fit for a host name and a header name, so it can come back as either. */
const SECRET = 'S3cret-Value-0451'

/** Another value of the same kinds of characters: its forms must come back untouched. */
const UNRELATED = 'Q9ndom-Thing-7713'

/** The forms a host might echo a value in, one a line. */
function encodings(value: string): string[] {
  const bytes = Buffer.from(value)
  return [
    JSON.stringify({ token: `${value}/` }).replaceAll('/', '\\/'),
    [...value].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
    ...[0, 1, 2].map((offset) =>
      Buffer.concat([Buffer.from('Bearer: '.slice(0, offset)), bytes]).toString('base64'),
    ),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
    Buffer.from(value, 'utf16le').toString('latin1'),
    Buffer.from(value, 'utf16le').swap16().toString('latin1'),
    [...value].map((c) => `&#${c.charCodeAt(0)};`).join(''),
    [...bytes].map((byte) => `%${byte.toString(16)}`).join(''),
  ]
}

/** A self-signed certificate for 127.0.0.1, trusted by this process only. */
function loopbackCertificate(): { key: string; cert: string } {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-tls-'))
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        '-keyout',
        path.join(folder, 'key.pem'),
        '-out',
        path.join(folder, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    )
    return {
      key: fs.readFileSync(path.join(folder, 'key.pem'), 'utf8'),
      cert: fs.readFileSync(path.join(folder, 'cert.pem'), 'utf8'),
    }
  } finally {
    fs.rmSync(folder, { recursive: true, force: true })
  }
}

describe('secrets in http.fetch', () => {
  const seen: (string | undefined)[] = []
  const handler: http.RequestListener = (request, response) => {
    const token = request.headers['x-token'] as string | undefined
    seen.push(token)
    const url = new URL(request.url ?? '/', 'https://x')
    const echo = token ?? 'nothing'
    switch (url.pathname) {
      case '/everywhere':
        // The token comes back in every part of a response a guest sees.
        response.setHeader(`x-${echo}`, 'named after it')
        response.setHeader('x-echo', echo)
        response.writeHead(200, `OK ${echo}`)
        response.end(`you sent ${echo}, ${encodeURIComponent(`${echo}/`)}`)
        return
      case '/encoded':
        // Every form of the token, or of another value when asked; Latin-1 keeps UTF-16's bytes.
        response.end(
          Buffer.from(encodings(url.searchParams.get('value') ?? echo).join('\n'), 'latin1'),
        )
        return
      case '/to-unlisted':
        response.writeHead(302, { location: `https://${echo}.example.invalid/` }).end()
        return
      case '/redirect':
        response.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end()
        return
      case '/to-self':
        response.writeHead(302, { location: `/landed?token=${echo}` }).end()
        return
      default:
        response.end(`hello from ${url.pathname}`)
    }
  }
  let secure: https.Server
  let plain: http.Server
  let securePort = 0
  let plainPort = 0
  before(async () => {
    const { key, cert } = loopbackCertificate()
    tls.setDefaultCACertificates([...tls.getCACertificates('default'), cert])
    secure = https.createServer({ key, cert }, handler)
    plain = http.createServer(handler)
    await new Promise<void>((resolve) => secure.listen(0, '127.0.0.1', resolve))
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve))
    securePort = (secure.address() as AddressInfo).port
    plainPort = (plain.address() as AddressInfo).port
  })
  after(async () => {
    await new Promise<void>((resolve) => secure.close(() => resolve()))
    await new Promise<void>((resolve) => plain.close(() => resolve()))
  })

  const open = (): Promise<EvalWorkshop> =>
    evalWorkshop({
      config: {
        http: { allow: ['127.0.0.1', 'localhost'] },
        secrets: { TOKEN: { domain: '127.0.0.1', header: 'x-token' } },
        env: ['ALSO_TOKEN', 'REGION'],
      },
      workshop: {
        evaluation: {
          testOnlyAllowLoopback: true,
          readVariable: (name) =>
            ({ TOKEN: SECRET, ALSO_TOKEN: `token=${SECRET}`, REGION: UNRELATED })[name],
        },
      },
    })
  const bound = "{ headers: { 'x-token': await env.get('TOKEN') } }"
  const fetchAll = (url: string) =>
    `const res = await http.fetch(${JSON.stringify(url)}, ${bound}); JSON.stringify(res)`

  it('sends a bound secret over https only: plain http is refused before anything is sent', async () => {
    await using fixture = await open()
    const before = seen.length
    assert.match(
      evalError(await fixture.run(fetchAll(`http://127.0.0.1:${plainPort}/hello`)), 'eval_error'),
      /\[permission_denied\]: http\.fetch refused: secret TOKEN may only be sent over https, and http:\/\/127\.0\.0\.1:\d+ is plain http\. Use an https:\/\/ URL\./,
    )
    assert.equal(seen.length, before, 'nothing reached the plain server')
    // The controls: the same request over https carries the value; without the secret, http works.
    JSON.parse(evalValue(await fixture.run(fetchAll(`https://127.0.0.1:${securePort}/hello`))))
    assert.equal(seen.at(-1), SECRET)
    const unsecret = await fixture.run(
      `(await http.fetch('http://127.0.0.1:${plainPort}/hello')).body`,
    )
    assert.equal(evalValue(unsecret), 'hello from /hello')
  })

  it('refuses the secret anywhere but its bound header and host, and drops it on a redirect away', async () => {
    await using fixture = await open()
    const base = `https://127.0.0.1:${securePort}`
    const before = seen.length
    for (const [url, init] of [
      [`${base}/hello`, "{ headers: { 'x-other': await env.get('TOKEN') } }"],
      [`${base}/hello?t=` + '${secret:TOKEN}', '{}'],
      [`${base}/hello`, "{ method: 'POST', body: 'token=' + await env.get('TOKEN') }"],
      [`https://localhost:${securePort}/hello`, bound],
      [`${base}/hello`, "{ headers: { 'x-token': '${secret:OTHER}' } }"],
    ] as const) {
      assert.match(
        evalError(
          await fixture.run(`(await http.fetch(${JSON.stringify(url)}, ${init})).body`),
          'eval_error',
        ),
        /\[permission_denied\]: .*secret/,
        `${url} ${init}`,
      )
    }
    assert.equal(seen.length, before, 'no refused request was sent')
    const away = `${base}/redirect?to=${encodeURIComponent(`https://localhost:${securePort}/final`)}`
    assert.equal(
      evalValue(await fixture.run(`(await http.fetch(${JSON.stringify(away)}, ${bound})).body`)),
      'hello from /final',
    )
    assert.equal(seen.at(-1), undefined, 'a redirect to another host drops the secret')
  })

  it('masks the secret in the status text, header names and values, body and final URL', async () => {
    await using fixture = await open()
    const answer = JSON.parse(
      evalValue(await fixture.run(fetchAll(`https://127.0.0.1:${securePort}/everywhere`))),
    ) as { statusText: string; headers: Record<string, string>; body: string; url: string }
    assert.equal(seen.at(-1), SECRET, 'the server got the value')
    const everything = JSON.stringify(answer)
    assert.doesNotMatch(everything, /s3cret-value-0451/i, everything)
    assert.equal(answer.statusText, 'OK ${secret:TOKEN}')
    assert.equal(answer.headers['x-echo'], '${secret:TOKEN}')
    assert.equal(answer.headers['x-${secret:TOKEN}'], 'named after it')
    assert.equal(answer.body, 'you sent ${secret:TOKEN}, ${secret:TOKEN}%2F')
    const landed = JSON.parse(
      evalValue(await fixture.run(fetchAll(`https://127.0.0.1:${securePort}/to-self`))),
    ) as { url: string; body: string }
    assert.equal(landed.body, 'hello from /landed')
    assert.equal(landed.url, `https://127.0.0.1:${securePort}/landed?token=\${secret:TOKEN}`)
  })

  it('masks the secret in an error that quotes where a redirect pointed', async () => {
    await using fixture = await open()
    const content = evalError(
      await fixture.run(fetchAll(`https://127.0.0.1:${securePort}/to-unlisted`)),
      'eval_error',
    )
    assert.match(
      content,
      /\[permission_denied\]: http\.fetch refused \$\{secret:TOKEN\}\.example\.invalid/,
    )
    assert.doesNotMatch(content, /s3cret-value-0451/i)
  })

  it('masks the secret in every form a host echoes it in: JSON escapes, base64 at each offset, hex, UTF-16, HTML, URL', async () => {
    await using fixture = await open()
    const base = `https://127.0.0.1:${securePort}/encoded`
    const body = evalValue(
      await fixture.run(`(await http.fetch(${JSON.stringify(base)}, ${bound})).body`),
    )
    assert.equal(seen.at(-1), SECRET, 'the server got the value and echoed it')
    const lines = body.split('\n')
    assert.equal(lines.length, encodings(SECRET).length)
    for (const [index, form] of encodings(SECRET).entries()) {
      assert.ok(lines[index]?.includes('${secret:TOKEN}'), `form ${index}: ${lines[index]}`)
      assert.ok(!body.includes(Buffer.from(form, 'latin1').toString('utf8')), `form ${index}`)
    }
    // The control: the same forms of another value come back as the host sent them.
    const other = evalValue(
      await fixture.run(
        `(await http.fetch(${JSON.stringify(`${base}?value=${UNRELATED}`)}, ${bound})).body`,
      ),
    )
    assert.equal(other, Buffer.from(encodings(UNRELATED).join('\n'), 'latin1').toString('utf8'))
    assert.ok(!other.includes('${secret:'))
  })

  it("masks the secret in a granted variable's value and in what an eval answers", async () => {
    await using fixture = await open()
    assert.equal(
      evalValue(await fixture.run("await env.get('ALSO_TOKEN')")),
      'token=${secret:TOKEN}',
    )
    assert.equal(evalValue(await fixture.run("await env.get('REGION')")), UNRELATED)
    // Code that spells the value out (a model that saw it elsewhere) gets it masked in its answer.
    const spelled = await fixture.run(
      `const v = ['S3cret', 'Value', '0451'].join('-'); console.log(encodeURIComponent('x' + v)); [v, encodeURIComponent(v + '/')].join(' ')`,
    )
    const text = JSON.stringify(spelled)
    assert.doesNotMatch(text, /s3cret-value-0451/i)
    assert.match(evalValue(spelled), /\$\{secret:TOKEN\} \$\{secret:TOKEN\}%2F/)
    assert.match(evalValue(spelled), /x\$\{secret:TOKEN\}/, 'the console output too')
    const failed = await fixture.run(`throw new Error(['S3cret', 'Value', '0451'].join('-'))`)
    assert.match(evalError(failed, 'eval_error'), /\$\{secret:TOKEN\}/)
    assert.doesNotMatch(JSON.stringify(failed), /s3cret-value-0451/i)
    // The control: another value passes.
    assert.equal(evalValue(await fixture.run(`${JSON.stringify(UNRELATED)}`)), UNRELATED)
  })
})
