'use strict';

/**
 * The bounds of the metrics endpoint's and the status page's server (issue 18, minor 8): an idle
 * or slow client gets its 408 at the configured headers timeout (not Node's 30 s check later) and
 * its connection is closed for good; connections past maxConnections are closed at accept; wrong
 * logins are throttled per address (429 with Retry-After), the right one never waits in normal use.
 */

const assert = require('node:assert/strict');
const net = require('node:net');
const D = require('../../gateway/runtime/config/defaults');
const { startServer } = require('../../gateway/runtime/http/serve');
const { until } = require('../helpers/wait');

const LOGIN = { username: 'viewer', password: 'correct horse battery staple' };
const basic = (u, p) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Open server-side connections */
const connections = (server) => new Promise((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

describe('metrics endpoint and status page server: timeouts, connection cap, login throttle', function () {
  this.timeout(30000);
  let s;
  afterEach(async () => { if (s) await s.close(); s = null; });

  it('will not listen beyond loopback without a login, nor with a username holding a colon (the loopback rule of the config, held by the server too)', async () => {
    const handle = (req, res) => res.end('ok');
    await assert.rejects(startServer({ host: '0.0.0.0', port: 0, realm: 'test', handle }), { code: 'NINES_ERR_INVALID_ARG', message: /^host: "0\.0\.0\.0" binds beyond loopback/ });
    await assert.rejects(startServer({ host: '127.0.0.1', port: 0, login: { username: 'a:b', password: 'pw' }, realm: 'test', handle }), { code: 'NINES_ERR_INVALID_ARG', message: /^login\.username: "a:b" must not contain ":"/ });
  });

  it(`answers an idle and a slow client with 408 at the headers timeout (${D.HTTP_HEADERS_TIMEOUT_MS / 1000} s, within 2 s), then closes their connections`, async () => {
    s = await startServer({ host: '127.0.0.1', port: 0, realm: 'test', handle: (req, res) => res.end('ok') });
    const started = Date.now();
    const clients = ['idle', 'slow'].map((kind) => {
      // allowHalfOpen: the client never closes its side, as a stuck or hostile one would not
      const c = net.connect({ port: s.port, host: '127.0.0.1', allowHalfOpen: true });
      c.on('error', () => {});
      if (kind === 'slow') c.once('connect', () => c.write('GET / HTTP/1.1\r\nHost: x\r\n')); // headers never end
      let text = '';
      c.on('data', (d) => { text += d; });
      return Promise.race([
        new Promise((resolve) => c.once('end', () => resolve({ kind, text, afterMs: Date.now() - started, socket: c }))),
        sleep(D.HTTP_HEADERS_TIMEOUT_MS + 3000).then(() => ({ kind, text: '(nothing)', afterMs: Date.now() - started, socket: c }))
      ]);
    });
    await until(async () => (await connections(s.server)) === 2, 'both connections accepted', 2000);
    const got = await Promise.all(clients);
    for (const g of got) {
      assert.match(g.text, /^HTTP\/1\.1 408 /, g.kind);
      assert.match(g.text, /"code":"NINES_ERR_HTTP_BAD_REQUEST"/, g.kind);
      assert.ok(g.afterMs >= D.HTTP_HEADERS_TIMEOUT_MS - 500 && g.afterMs <= D.HTTP_HEADERS_TIMEOUT_MS + 2000, `${g.kind}: 408 after ${g.afterMs} ms`);
    }
    // the server's side is gone, not waiting for the client's FIN that never comes
    await until(async () => (await connections(s.server)) === 0, 'the server to close both connections', 2000);
    for (const g of got) g.socket.destroy();
  });

  it('closes connections past maxConnections at accept, and serves again once one closes', async () => {
    s = await startServer({ host: '127.0.0.1', port: 0, maxConnections: 3, realm: 'test', handle: (req, res) => res.end('ok') });
    const sockets = [];
    const closed = [];
    for (let i = 0; i < 6; i++) {
      const c = net.connect(s.port, '127.0.0.1');
      c.on('error', () => {});
      c.once('close', () => closed.push(i));
      await new Promise((resolve) => c.once('connect', resolve));
      sockets.push(c);
    }
    await until(() => closed.length === 3, 'three connections closed', 5000);
    assert.deepEqual(closed.sort(), [3, 4, 5]);
    assert.equal(await connections(s.server), 3);
    sockets[0].destroy();
    await until(async () => (await connections(s.server)) === 2, 'a slot free', 2000);
    assert.equal((await fetch(`${s.url}/`)).status, 200);
    for (const c of sockets) c.destroy();
  });

  it('throttles wrong logins per address with 429 and Retry-After, the right one included during a lockout; it needs no wait otherwise', async () => {
    s = await startServer({ host: '127.0.0.1', port: 0, login: LOGIN, realm: 'test', handle: (req, res) => res.end('ok') });
    const get = (p) => fetch(`${s.url}/`, { headers: { authorization: basic(LOGIN.username, p) } });
    // a request without credentials (a browser's first) is no guess: 20 of them cost nothing
    for (let i = 0; i < 20; i++) assert.equal((await fetch(`${s.url}/`)).status, 401);
    // normal use: the right login at once
    assert.equal((await get(LOGIN.password)).status, 200);
    const statuses = [];
    let retryAfter = null;
    const t0 = Date.now();
    for (let i = 0; i < 50; i++) {
      const res = await get(`guess-${i}`);
      statuses.push(res.status);
      if (res.status === 429) {
        retryAfter = Number(res.headers.get('retry-after'));
        const body = await res.json();
        assert.equal(body.error.code, 'NINES_ERR_HTTP_TOO_MANY_LOGINS');
        assert.match(body.error.message, /^6 wrong logins from (?:::ffff:)?127\.0\.0\.1: try again in \d+ s$/);
      } else {
        await res.arrayBuffer();
      }
    }
    // five free failures, one more that starts the lockout, then nothing but 429 within it
    assert.deepEqual(statuses.slice(0, D.HTTP_LOGIN_FREE_FAILURES + 1), Array(D.HTTP_LOGIN_FREE_FAILURES + 1).fill(401));
    if (Date.now() - t0 < D.HTTP_LOGIN_LOCKOUT_MIN_MS) assert.ok(statuses.slice(D.HTTP_LOGIN_FREE_FAILURES + 1).every((st) => st === 429), statuses.join(','));
    assert.ok(statuses.filter((st) => st === 401).length <= D.HTTP_LOGIN_FREE_FAILURES + 3, `wrong logins that were tried: ${statuses.join(',')}`);
    assert.ok(retryAfter >= 1, `Retry-After ${retryAfter}`);
    // the right login during the lockout is refused too: a guesser learns nothing from it
    const during = await get(LOGIN.password);
    assert.equal(during.status, 429);
    // after the lockout the right login works and clears the address's record
    await until(async () => {
      const r = await get(LOGIN.password);
      await r.arrayBuffer();
      return r.status === 200;
    }, 'the lockout to end', D.HTTP_LOGIN_LOCKOUT_MAX_MS, { everyMs: 20 });
    assert.equal((await get('one-typo')).status, 401, 'a typo after a right login is a fresh start');
  });

});
