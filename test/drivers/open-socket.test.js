'use strict';

/**
 * The one TCP socket opener every driver uses (gateway/drivers/open-socket.js): a callback that fires
 * exactly once, Nagle off and keep-alive on, one coded error shape, and no socket of an abandoned
 * attempt ever handed over. Real sockets on 127.0.0.1, port 0.
 *
 * A connect on loopback completes in the kernel at once, but Node hears of it only in the poll phase
 * of a later turn of the event loop. Blocking the loop for a while after the connect syscall has gone
 * out (it goes out on process.nextTick) therefore leaves a connection the peer already has and the
 * attempt does not know of yet: a timer that ran out meanwhile fires first (timers come before poll),
 * and an abort() then finds the connect completed in the kernel but not yet delivered.
 */

const assert = require('node:assert/strict');
const net = require('node:net');
const { once } = require('node:events');
const C = require('../../gateway/base/constants');
const { openSocket } = require('../../gateway/drivers/open-socket');
const { createClient } = require('../../gateway/drivers');
const { freePort } = require('../modbus/helpers');
const { until } = require('../helpers/wait');

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Blocks the event loop (see the file header). */
function spin (ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) { /* busy */ }
}

/** A server on 127.0.0.1 that records each connection it accepts and when that connection closes. */
async function startServer () {
  const accepted = [];
  const closed = [];
  const server = net.createServer((socket) => {
    accepted.push(socket);
    socket.on('error', () => {});
    socket.on('close', () => closed.push(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = /** @type {net.AddressInfo} */ (server.address());
  return {
    port,
    accepted,
    closed,
    endpoint: (extra) => ({ host: '127.0.0.1', port, url: `test://127.0.0.1:${port}`, ...extra }),
    stop: () => {
      for (const s of accepted) s.destroy();
      return new Promise((resolve) => server.close(resolve));
    }
  };
}

/** Records every call of cb. */
function recorder () {
  const calls = [];
  const cb = (err, socket) => calls.push({ err, socket });
  return { calls, cb };
}

describe('openSocket', () => {
  let srv;
  beforeEach(async () => { srv = await startServer(); });
  afterEach(async () => { await srv.stop(); });

  it('calls back once with the open socket, which carries none of the attempt\'s listeners', async () => {
    const { calls, cb } = recorder();
    openSocket(srv.endpoint(), 1000, cb);
    await until(() => calls.length === 1);
    const { err, socket } = calls[0];
    assert.equal(err, null);
    assert.ok(socket instanceof net.Socket);
    assert.equal(socket.remotePort, srv.port);
    assert.equal(socket.listenerCount('connect'), 0);
    assert.equal(socket.listenerCount('error'), 0);
    assert.equal(socket.listenerCount('close'), 0);
    // Neither the timer nor the peer going away reaches the callback again
    socket.on('error', () => {});
    await wait(30);
    await until(() => srv.accepted.length === 1);
    srv.accepted[0].destroy();
    await once(socket, 'close');
    await wait(20);
    assert.equal(calls.length, 1);
  });

  it('turns Nagle off and keep-alive on, after the default delay unless keepAliveMs is given', async () => {
    const proto = net.Socket.prototype;
    const { setNoDelay, setKeepAlive } = proto;
    const seen = [];
    proto.setNoDelay = function (...args) { seen.push({ socket: this, call: 'setNoDelay', args }); return setNoDelay.apply(this, args); };
    proto.setKeepAlive = function (...args) { seen.push({ socket: this, call: 'setKeepAlive', args }); return setKeepAlive.apply(this, args); };
    try {
      for (const [extra, delay] of [[{}, C.TCP_KEEPALIVE_MS], [{ keepAliveMs: 1234 }, 1234]]) {
        seen.length = 0;
        const { calls, cb } = recorder();
        openSocket(srv.endpoint(extra), 1000, cb);
        await until(() => calls.length === 1);
        const socket = calls[0].socket;
        const mine = seen.filter((s) => s.socket === socket).map(({ call, args }) => ({ call, args }));
        assert.deepEqual(mine, [{ call: 'setNoDelay', args: [true] }, { call: 'setKeepAlive', args: [true, delay] }]);
        socket.destroy();
      }
    } finally {
      proto.setNoDelay = setNoDelay;
      proto.setKeepAlive = setKeepAlive;
    }
    assert.equal(C.TCP_KEEPALIVE_MS, 10000);
  });

  it('reads into the onread buffer it is given', async () => {
    const buffer = Buffer.alloc(16);
    const got = [];
    const { calls, cb } = recorder();
    openSocket(srv.endpoint({ onread: { buffer, callback: (n, buf) => { got.push(buf.toString('latin1', 0, n)); } } }), 1000, cb);
    await until(() => calls.length === 1 && srv.accepted.length === 1);
    srv.accepted[0].write('hello');
    await until(() => got.join('') === 'hello');
    calls[0].socket.destroy();
  });

  it('calls back once with NINES_ERR_CONNECT_FAILED and the system code when refused', async () => {
    const port = await freePort();
    const { calls, cb } = recorder();
    openSocket({ host: '127.0.0.1', port, url: `test://127.0.0.1:${port}` }, 1000, cb);
    await until(() => calls.length === 1);
    await wait(30);
    assert.equal(calls.length, 1);
    const { err, socket } = calls[0];
    assert.equal(socket, undefined);
    assert.equal(err.code, 'NINES_ERR_CONNECT_FAILED');
    assert.equal(err.message, `connect to 127.0.0.1:${port} failed: ECONNREFUSED`);
    assert.deepEqual(err.details, { target: `test://127.0.0.1:${port}`, cause: 'ECONNREFUSED' });
  });

  it('calls back once with NINES_ERR_CONNECT_TIMEOUT when the connect has not come in time, and closes the late connection', async () => {
    await new Promise((resolve) => setImmediate(resolve)); // the check phase: the timers phase comes next (file header)
    const { calls, cb } = recorder();
    openSocket(srv.endpoint(), 1, cb);
    spin(30);
    await until(() => calls.length === 1);
    const { err, socket } = calls[0];
    assert.equal(socket, undefined);
    assert.equal(err.code, 'NINES_ERR_CONNECT_TIMEOUT');
    assert.equal(err.message, `connect to 127.0.0.1:${srv.port} timed out after 1 ms`);
    assert.deepEqual(err.details, { target: `test://127.0.0.1:${srv.port}`, connectTimeoutMs: 1 });
    // The peer had the connection: it sees it closed, never used
    await until(() => srv.accepted.length === 1 && srv.closed.length === 1, 'the late connection closed');
    await wait(30);
    assert.equal(calls.length, 1);
  });

  it('abort() while connecting destroys the socket: no callback ever, done once it is closed', async () => {
    const { calls, cb } = recorder();
    const attempt = openSocket(srv.endpoint(), 1000, cb);
    let done = 0;
    attempt.abort(() => done++);
    await until(() => done === 1);
    await wait(50);
    assert.equal(calls.length, 0);
    assert.equal(srv.accepted.length, 0);
    attempt.abort(() => done++); // again: nothing left to wait for
    assert.equal(done, 2);
  });

  it('a connect that completed in the kernel after abort() is destroyed, never handed over', async () => {
    const { calls, cb } = recorder();
    const attempt = openSocket(srv.endpoint(), 1000, cb);
    let done = 0;
    // After net's own nextTick: the connect syscall has gone out, and the kernel completes it meanwhile
    process.nextTick(() => {
      spin(30);
      attempt.abort(() => done++);
    });
    await until(() => done === 1);
    // The peer got the connection, and it was closed without a byte
    await until(() => srv.accepted.length === 1 && srv.closed.length === 1, 'the stale connection closed');
    assert.equal(srv.accepted[0].bytesRead, 0);
    await wait(50);
    assert.equal(calls.length, 0);
  });

  it('abort() after the callback leaves the handed-over socket alone', async () => {
    const { calls, cb } = recorder();
    const attempt = openSocket(srv.endpoint(), 1000, cb);
    await until(() => calls.length === 1);
    let done = 0;
    attempt.abort(() => done++);
    assert.equal(done, 1);
    assert.equal(calls[0].socket.destroyed, false);
    calls[0].socket.destroy();
  });
});

describe('openSocket in every driver', () => {
  const TARGETS = [
    (port) => `ascii://127.0.0.1:${port}`,
    (port) => `modbus+tcp://127.0.0.1:${port}`,
    (port) => `modbus+rtutcp://127.0.0.1:${port}`
  ];

  it('fails a refused connect with the same code, message and details in each', async () => {
    const port = await freePort();
    for (const url of TARGETS.map((t) => t(port))) {
      const client = createClient(url, { reconnect: false });
      const err = await client.connect().then(() => assert.fail(`${url} connected`), (e) => e);
      await client.close();
      assert.equal(err.code, 'NINES_ERR_CONNECT_FAILED', url);
      assert.equal(err.message, `connect to 127.0.0.1:${port} failed: ECONNREFUSED`, url);
      assert.deepEqual(err.details, { target: client.target.url, cause: 'ECONNREFUSED' }, url);
    }
  });

  it('turns Nagle off and keep-alive on after the same delay in each (Modbus: keepAliveMs when given)', async () => {
    const srv = await startServer();
    const proto = net.Socket.prototype;
    const { setNoDelay, setKeepAlive } = proto;
    const seen = [];
    proto.setNoDelay = function (...args) { seen.push(['setNoDelay', ...args]); return setNoDelay.apply(this, args); };
    proto.setKeepAlive = function (...args) { seen.push(['setKeepAlive', ...args]); return setKeepAlive.apply(this, args); };
    try {
      const cases = [...TARGETS.map((t) => [t(srv.port), {}, C.TCP_KEEPALIVE_MS]), [`modbus+tcp://127.0.0.1:${srv.port}`, { keepAliveMs: '2s' }, 2000]];
      for (const [url, opts, delay] of cases) {
        seen.length = 0;
        const client = createClient(url, { reconnect: false, ...opts });
        await client.connect();
        await client.close();
        assert.deepEqual(seen, [['setNoDelay', true], ['setKeepAlive', true, delay]], url);
      }
    } finally {
      proto.setNoDelay = setNoDelay;
      proto.setKeepAlive = setKeepAlive;
      await srv.stop();
    }
  });

  it('close() during a connect ends the attempt in each: the peer sees the connection closed, unused', async () => {
    const srv = await startServer();
    try {
      for (const url of TARGETS.map((t) => t(srv.port))) {
        const before = srv.closed.length;
        const client = createClient(url, { reconnect: false });
        const connecting = client.connect().then(() => 'connected', (e) => e.code);
        let closed = null;
        process.nextTick(() => { spin(30); closed = client.close(); });
        assert.equal(await connecting, 'NINES_ERR_CLOSED', url);
        await closed;
        await until(() => srv.closed.length === before + 1, `${url}: the stale connection closed`);
        assert.equal(client.state, 'closed');
      }
    } finally {
      await srv.stop();
    }
  });
});
