'use strict';

/**
 * Bad input to the metrics endpoint and the status page: unexpected headers, unknown paths,
 * other methods, bodies, malformed and oversized requests, wrong logins. Each gets its HTTP
 * status and a JSON body with a NINES_ERR_HTTP_* code, and changes nothing: what the endpoints
 * serve afterwards is what they served before, and the gateway keeps serving.
 */

const assert = require('node:assert/strict');
const net = require('node:net');
const { Gateway } = require('../../gateway/runtime/gateway');
const { validateConfig } = require('../../gateway/runtime/config');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');

const LOGIN = { username: 'viewer', password: 'correct horse battery staple' };
const basic = (u, p) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
const GOOD = { authorization: basic(LOGIN.username, LOGIN.password) };

/** One raw request over a socket, for what fetch would refuse to send; resolves with the whole answer */
function raw (url, text) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(text));
    let out = '';
    socket.on('data', (d) => { out += d; });
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

/** The nines_ lines of the text exposition (the process_ and nodejs_ ones move by themselves) */
async function ninesLines (url) {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  return (await res.text()).split('\n').filter((l) => l.startsWith('nines_'));
}

async function statusWithoutClock (url) {
  const res = await fetch(`${url}status.json`, { headers: GOOD });
  assert.equal(res.status, 200);
  const s = await res.json();
  delete s.now;
  return s;
}

async function assertCoded (res, status, code) {
  assert.equal(res.status, status);
  assert.match(res.headers.get('content-type'), /^application\/json/);
  const body = await res.json();
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  return body;
}

describe('metrics endpoint and status page refuse bad requests, coded, changing nothing', function () {
  this.timeout(30000);
  let sim, gw, metricsUrl, pageUrl, served;

  before(async () => {
    sim = await createModbusTcpSimulator({ port: 0 });
    gw = new Gateway(validateConfig({
      gateway: { id: 'gw-r', interval: '200ms', workers: 1, metrics: { listen: '127.0.0.1:0' }, http: { listen: '127.0.0.1:0', ...LOGIN } },
      mqtt: { embedded: { port: 0 } },
      devices: { plc: { target: sim.url } },
      jobs: [{ name: 'hr', device: 'plc', read: { fc: 3, address: 0, quantity: 4 }, rate: '100/s', count: 60 }]
    }, { env: {} }));
    const ended = new Promise((resolve) => gw.once('end', resolve));
    await gw.start();
    metricsUrl = gw.metrics.url;
    pageUrl = gw.status.url;
    await ended; // a bounded job: what is served stays put from here on, once its last summary is acknowledged
    const deadline = Date.now() + 5000;
    while (gw.publisher.stats.inflight !== 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    served = { metrics: await ninesLines(metricsUrl), status: await statusWithoutClock(pageUrl) };
    assert.ok(served.metrics.some((l) => /^nines_job_requests_total\{.*outcome="ok"\} [1-9]/.test(l)), 'the job ran');
  });

  after(async () => {
    if (gw) await gw.stop();
    if (sim) await sim.close();
  });

  it('answers an Accept header naming no served format with 406 NINES_ERR_HTTP_BAD_REQUEST', async () => {
    await assertCoded(await fetch(metricsUrl, { headers: { accept: 'application/json' } }), 406, 'NINES_ERR_HTTP_BAD_REQUEST');
    await assertCoded(await fetch(metricsUrl, { headers: { accept: 'text/plain;q=banana' } }), 406, 'NINES_ERR_HTTP_BAD_REQUEST');
    await assertCoded(await fetch(metricsUrl, { headers: { accept: 'application/vnd.google.protobuf;proto=other.Thing' } }), 406, 'NINES_ERR_HTTP_BAD_REQUEST');
  });

  it('serves the text format to a wildcard or an unknown Accept-Encoding, and ignores headers it does not use', async () => {
    const res = await fetch(metricsUrl, { headers: { accept: '*/*', 'accept-encoding': 'br;q=1, zstd', 'x-scrape-thing': '\u00e9t\u00e9', 'x-prometheus-scrape-timeout-seconds': 'never' } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  });

  it('answers unknown paths with 404 and other methods with 405, both NINES_ERR_HTTP_NOT_FOUND', async () => {
    const body = await assertCoded(await fetch(`${metricsUrl}/../admin`), 404, 'NINES_ERR_HTTP_NOT_FOUND');
    assert.equal(body.error.details.path, '/admin');
    await assertCoded(await fetch(metricsUrl.replace('/metrics', '/metrics.json')), 404, 'NINES_ERR_HTTP_NOT_FOUND');
    await assertCoded(await fetch(`${pageUrl}no/such/page`, { headers: GOOD }), 404, 'NINES_ERR_HTTP_NOT_FOUND');
    await assertCoded(await fetch(`${pageUrl}plot/nosuchjob.svg`, { headers: GOOD }), 404, 'NINES_ERR_HTTP_NOT_FOUND');
    const post = await fetch(metricsUrl, { method: 'POST', body: 'x' });
    await assertCoded(post, 405, 'NINES_ERR_HTTP_NOT_FOUND');
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    await assertCoded(await fetch(`${pageUrl}status.json`, { method: 'DELETE', headers: GOOD }), 405, 'NINES_ERR_HTTP_NOT_FOUND');
  });

  it('refuses a GET with a body, a malformed request and oversized headers with NINES_ERR_HTTP_BAD_REQUEST', async () => {
    const { host } = new URL(metricsUrl);
    const withBody = await raw(metricsUrl, `GET /metrics HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello`);
    assert.match(withBody, /^HTTP\/1\.1 400 /);
    assert.match(withBody, /"code":"NINES_ERR_HTTP_BAD_REQUEST"/);
    const garbage = await raw(metricsUrl, 'NOT HTTP AT ALL\r\n\r\n');
    assert.match(garbage, /^HTTP\/1\.1 400 /);
    assert.match(garbage, /"code":"NINES_ERR_HTTP_BAD_REQUEST"/);
    const huge = await raw(pageUrl, `GET / HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`);
    assert.match(huge, /^HTTP\/1\.1 431 /);
    assert.match(huge, /"code":"NINES_ERR_HTTP_BAD_REQUEST"/);
  });

  it('asks for the login on the status page: none or a wrong one is 401 NINES_ERR_HTTP_UNAUTHORIZED', async () => {
    for (const headers of [{}, { authorization: basic(LOGIN.username, 'wrong') }, { authorization: basic('someone', LOGIN.password) }, { authorization: 'Basic !!!' }, { authorization: 'Bearer abc' }]) {
      const res = await fetch(pageUrl, { headers });
      await assertCoded(res, 401, 'NINES_ERR_HTTP_UNAUTHORIZED');
      assert.match(res.headers.get('www-authenticate'), /^Basic realm="nines status"/);
    }
    // refused before routing: an unknown path without the login says nothing about what exists
    await assertCoded(await fetch(`${pageUrl}no/such/page`), 401, 'NINES_ERR_HTTP_UNAUTHORIZED');
    assert.equal((await fetch(pageUrl, { headers: GOOD })).status, 200);
  });

  it('changed nothing: the endpoints serve what they served before, and still serve', async () => {
    assert.deepEqual(await ninesLines(metricsUrl), served.metrics);
    assert.deepEqual(await statusWithoutClock(pageUrl), served.status);
  });
});
