'use strict';

// Connection loss and recovery (TCP): the failures users of node-red-contrib-modbus hate most are
// clients stuck after a device or network drop (peers-and-conventions.md §1.5 item 1).

const assert = require('node:assert/strict');
const { createClient, parseOpString } = require('../../gateway/drivers/modbus');
const { freePort, startServerTCP, rejectionOf, eventOf } = require('./helpers');

describe('modbus client (TCP): reconnects', () => {
  const cleanup = [];
  afterEach(async () => {
    while (cleanup.length) await cleanup.pop()();
  });

  /** A client with fast, deterministic backoff (random fixed at 0.5), closed after the test. */
  function client (port, opts = {}) {
    const c = createClient(`modbus+tcp://127.0.0.1:${port}`, { backoff: { initialMs: 10, maxMs: 40 }, random: () => 0.5, ...opts });
    cleanup.push(() => c.close());
    return c;
  }

  it('fails the request in flight with NINES_ERR_CONNECTION_CLOSED when the server dies, then recovers on the same port', async () => {
    // Address 99 never answers: a request there is in flight when the server goes away
    const hold = { getHoldingRegister: (a) => (a === 99 ? new Promise(() => {}) : a) };
    let srv = await startServerTCP({ vector: hold });
    const port = srv.port;
    cleanup.push(() => srv.close());
    const c = client(port, { timeoutMs: 5000 });
    await c.connect();
    const inflight = c.request('3:99:1');
    const closed = eventOf(c, 'close');
    const reconnecting = eventOf(c, 'reconnecting');
    await srv.close();
    const err = await rejectionOf(inflight);
    assert.equal(err.code, 'NINES_ERR_CONNECTION_CLOSED');
    assert.equal(typeof err.sentNs, 'bigint');
    assert.equal((await closed)[0].code, 'NINES_ERR_CONNECTION_CLOSED');
    const [{ attempt, delayMs }] = await reconnecting;
    assert.equal(attempt, 1);
    assert.ok(delayMs > 0);
    assert.equal(c.state, 'reconnecting');

    // A request made during the outage waits in the queue (its own timeout running) and is served after recovery
    const queued = c.request('3:5:1');
    assert.equal(c.stats.queued, 1);
    const connected = eventOf(c, 'connect');
    srv = await startServerTCP({ port, vector: hold });
    await connected;
    assert.deepEqual((await queued).data, [5]);
    assert.deepEqual((await c.request('3:6:1')).data, [6]);
    const s = c.stats;
    assert.equal(s.connects, 2);
    assert.equal(s.drops, 1);
    assert.equal(s.connectionLost, 1);
    assert.ok(s.reconnects >= 1);
    assert.equal(c.state, 'connected');
  });

  it('rejects a request queued during an outage with NINES_ERR_NOT_CONNECTED when its timeout expires', async () => {
    const port = await freePort();
    const c = client(port, { timeoutMs: 60 });
    const err = await rejectionOf(c.request('3:0:1'));
    assert.equal(err.code, 'NINES_ERR_NOT_CONNECTED');
    assert.equal(err.sentNs, undefined);
    assert.match(err.message, /not connected/);
    assert.equal(c.stats.notConnected, 1);
  });

  it('rejects connect() with NINES_ERR_CONNECT_FAILED when refused, then retries in the background with growing, capped delays', async () => {
    const port = await freePort();
    const c = client(port);
    const errors = [];
    c.on('error', (e) => errors.push(e.code));
    const events = [];
    c.on('reconnecting', (e) => events.push(e));
    const err = await rejectionOf(c.connect());
    assert.equal(err.code, 'NINES_ERR_CONNECT_FAILED');
    assert.equal(err.details.cause, 'ECONNREFUSED');
    while (events.length < 5) await eventOf(c, 'reconnecting');
    assert.deepEqual(events.slice(0, 5).map((e) => e.attempt), [1, 2, 3, 4, 5]);
    // random 0.5 → 3/4 of the capped exponential ceiling: 10, 20, 40, 40, 40 → 8, 15, 30, 30, 30
    assert.deepEqual(events.slice(0, 5).map((e) => e.delayMs), [8, 15, 30, 30, 30]);
    assert.ok(errors.length >= 4 && errors.every((code) => code === 'NINES_ERR_CONNECT_FAILED'));
    assert.equal(c.state, 'reconnecting');

    // The device comes up: the client connects by itself
    const connected = eventOf(c, 'connect');
    const srv = await startServerTCP({ port });
    cleanup.push(() => srv.close());
    await connected;
    assert.deepEqual((await c.request('3:2:1')).data, [6]);
    assert.ok(c.stats.connectFailures >= 5);
  });

  it('does not crash on background failures when nobody listens for error', async () => {
    const c = client(await freePort());
    assert.equal(c.listenerCount('error'), 0);
    await rejectionOf(c.connect());
    await eventOf(c, 'reconnecting');
    await eventOf(c, 'reconnecting');
  });

  it('with reconnect off, fails connect once, goes idle and rejects waiting requests with NINES_ERR_NOT_CONNECTED', async () => {
    const port = await freePort();
    const c = client(port, { reconnect: false });
    c.on('reconnecting', () => assert.fail('must not reconnect'));
    const req = c.request('3:0:1');
    const err = await rejectionOf(req);
    assert.equal(err.code, 'NINES_ERR_NOT_CONNECTED');
    assert.equal(err.details.cause, 'NINES_ERR_CONNECT_FAILED');
    assert.equal(c.state, 'idle');
    assert.equal((await rejectionOf(c.connect())).code, 'NINES_ERR_CONNECT_FAILED');
    // The next request tries again
    const srv = await startServerTCP({ port });
    cleanup.push(() => srv.close());
    assert.deepEqual((await c.request('3:1:1')).data, [3]);
  });

  it('with reconnect off, a drop leaves the client idle and the next request reconnects', async () => {
    const srv = await startServerTCP();
    cleanup.push(() => srv.close());
    const c = client(srv.port, { reconnect: false });
    await c.request('3:0:1');
    const closed = eventOf(c, 'close');
    for (const sock of srv.server.socks.keys()) sock.destroy();
    await closed;
    assert.equal(c.state, 'idle');
    assert.deepEqual((await c.request('3:1:1')).data, [3]);
    assert.equal(c.stats.connects, 2);
  });

  it('stops reconnecting when closed', async () => {
    const c = client(await freePort());
    await rejectionOf(c.connect());
    await eventOf(c, 'reconnecting');
    await c.close();
    assert.equal(c.state, 'closed');
    const before = c.stats.reconnects;
    await new Promise((resolve) => setTimeout(resolve, 80));
    assert.equal(c.stats.reconnects, before);
  });

  it('keeps a closed loop going across a server restart: every request either succeeds or fails with a coded error', async () => {
    let srv = await startServerTCP();
    const port = srv.port;
    const c = client(port, { timeoutMs: 500 });
    const op = parseOpString('3:1:1');
    const codes = new Set();
    let ok = 0;
    let stop = false;
    const loop = (async () => {
      while (!stop) {
        try { await c.request(op); ok++; } catch (err) { codes.add(err.code); await new Promise((resolve) => setTimeout(resolve, 5)); }
      }
    })();
    while (ok < 20) await new Promise((resolve) => setTimeout(resolve, 5));
    await srv.close();
    await eventOf(c, 'reconnecting');
    srv = await startServerTCP({ port });
    cleanup.push(() => srv.close());
    const okBefore = ok;
    await eventOf(c, 'connect');
    while (ok < okBefore + 20) await new Promise((resolve) => setTimeout(resolve, 5));
    stop = true;
    await loop;
    for (const code of codes) assert.ok(['NINES_ERR_CONNECTION_CLOSED', 'NINES_ERR_NOT_CONNECTED'].includes(code), code);
  });
});
