'use strict';

/**
 * The connection lifecycle both driver clients inherit (gateway/drivers/connection.js): states,
 * connect() waiters, backoff growth and reset, the queue bound, per-request deadlines and close().
 * Every test runs against the ASCII client and the Modbus TCP client, each against its simulator on
 * 127.0.0.1, through createClient, as the driver contract suite does.
 */

const assert = require('node:assert/strict');
const { createClient } = require('../../gateway/drivers');
const { Connection } = require('../../gateway/drivers/connection');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { freePort, rejectionOf, eventOf } = require('../modbus/helpers');
const { until } = require('../helpers/wait');

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The counters both clients keep, with the same meaning */
const SHARED_COUNTERS = ['requests', 'ok', 'errors', 'timeouts', 'invalid', 'queueFull', 'lateReplies', 'connects',
  'connectFailures', 'drops', 'reconnects', 'notConnected', 'connectionLost', 'closed', 'queued', 'inFlight'];

const PROTOCOLS = [
  {
    name: 'ASCII client',
    start: (port = 0) => createAsciiSimulator({ port }),
    url: (port) => `ascii://127.0.0.1:${port}`,
    op: '@01',
    check: (r) => assert.deepEqual(r.inputs, Array(8).fill(true))
  },
  {
    name: 'Modbus TCP client',
    start: (port = 0) => createModbusTcpSimulator({ port }),
    url: (port) => `modbus+tcp://127.0.0.1:${port}?unitId=1`,
    op: { fc: 3, address: 0, quantity: 1 },
    check: (r) => assert.deepEqual(r.data, [0])
  }
];

/** Records the lifecycle events of a client, in order. */
function recordEvents (client) {
  const events = [];
  client.on('connect', () => events.push('connect'));
  client.on('close', (err) => events.push(err ? `close ${err.code}` : 'close'));
  client.on('reconnecting', ({ attempt }) => events.push(`reconnecting ${attempt}`));
  return events;
}

/** @param {Record<string, number>} s stats @returns {void} every valid request is accounted for exactly once */
function assertBalanced (s) {
  assert.equal(s.requests, s.ok + s.errors + s.timeouts + s.queued + s.inFlight, JSON.stringify(s));
}

for (const P of PROTOCOLS) {
  describe(`connection lifecycle: ${P.name}`, function () {
    this.timeout(10000);
    const cleanup = [];
    afterEach(async () => {
      while (cleanup.length) await cleanup.pop()();
    });

    async function sim (port) {
      const s = await P.start(port);
      cleanup.push(() => s.close());
      return s;
    }

    function client (port, opts = {}) {
      const c = createClient(P.url(port), { backoff: { initialMs: 10, maxMs: 1000 }, random: () => 0, ...opts });
      cleanup.push(() => c.close());
      return c;
    }

    it('is a Connection and starts idle, without connecting', () => {
      const c = client(1);
      assert.ok(c instanceof Connection);
      assert.equal(c.state, 'idle');
      assert.equal(c.target.port, 1);
      assert.equal(c.timeoutMs, 1000);
      assert.equal(c.queueMax, 64);
      assert.equal(c.reconnect, true);
      const st = c.stats;
      for (const key of SHARED_COUNTERS) assert.equal(st[key], 0, key);
    });

    it('goes connecting → connected → reconnecting → connected → closed, with one event per change', async () => {
      const s = await sim();
      const c = client(s.port);
      const events = recordEvents(c);
      const connecting = c.connect();
      assert.equal(c.state, 'connecting');
      await connecting;
      assert.equal(c.state, 'connected');
      P.check(await c.request(P.op));

      s.faults.set('close=1'); // the device closes the connection instead of answering
      const lost = await rejectionOf(c.request(P.op));
      assert.equal(lost.code, 'NINES_ERR_CONNECTION_CLOSED');
      assert.equal(typeof lost.sentNs, 'bigint');
      assert.equal(c.state, 'reconnecting');
      s.faults.clear();
      await until(() => c.state === 'connected', 'the reconnect');
      P.check(await c.request(P.op));
      await c.close();
      assert.equal(c.state, 'closed');
      assert.deepEqual(events, ['connect', 'close NINES_ERR_CONNECTION_CLOSED', 'reconnecting 1', 'connect', 'close']);
      const st = c.stats;
      assert.equal(st.connects, 2);
      assert.equal(st.drops, 1);
      assert.equal(st.connectionLost, 1);
      assert.equal(st.reconnects, 1);
      assertBalanced(st);
    });

    it('lets every connect() caller share one attempt, and resolves at once when connected', async () => {
      const s = await sim();
      const c = client(s.port);
      await Promise.all([c.connect(), c.connect(), c.connect()]);
      await c.connect();
      assert.equal(s.stats.connections, 1);
      assert.equal(c.stats.connects, 1);
    });

    it('rejects connect() with the next attempt\'s failure, retries in the background, and connects once the device is up', async () => {
      const port = await freePort();
      const c = client(port);
      const errors = [];
      c.on('error', (e) => errors.push(e.code));
      const [a, b] = await Promise.all([rejectionOf(c.connect()), rejectionOf(c.connect())]);
      assert.equal(a.code, 'NINES_ERR_CONNECT_FAILED');
      assert.equal(b, a, 'both callers get the same failure');
      assert.equal(a.details.cause, 'ECONNREFUSED');
      assert.equal(errors[0], 'NINES_ERR_CONNECT_FAILED');
      await eventOf(c, 'reconnecting');
      assert.equal(c.state, 'reconnecting');
      await sim(port);
      await c.connect();
      assert.equal(c.state, 'connected');
      assert.ok(c.stats.connectFailures >= 1);
    });

    it('grows the backoff while connections fail or drop before the device answers', async () => {
      const s = await sim();
      s.faults.set('refuse'); // accepts, then closes at once
      const c = client(s.port);
      const delays = [];
      c.on('reconnecting', ({ attempt, delayMs }) => delays.push([attempt, delayMs]));
      c.connect().catch(() => {});
      await until(() => delays.length >= 4, 'four reconnects');
      // random 0 → half the capped exponential ceiling: 10, 20, 40, 80 ms → 5, 10, 20, 40
      assert.deepEqual(delays.slice(0, 4), [[1, 5], [2, 10], [3, 20], [4, 40]]);
    });

    it('resets the backoff once the device has answered on a connection', async () => {
      const s = await sim();
      s.faults.set('refuse');
      const c = client(s.port);
      const attempts = [];
      c.on('reconnecting', ({ attempt }) => attempts.push(attempt));
      c.connect().catch(() => {});
      await until(() => attempts.length >= 3, 'three reconnects');
      s.faults.clear();
      P.check(await c.request(P.op, { timeoutMs: 3000 }));
      attempts.length = 0;
      s.faults.set('close=1');
      await rejectionOf(c.request(P.op));
      await until(() => attempts.length >= 1, 'a reconnect');
      assert.equal(attempts[0], 1, 'the backoff starts over');
    });

    it('resets the backoff when a connection stayed up for backoff.maxMs, even without an answer', async () => {
      const s = await sim();
      s.faults.set('refuse');
      const c = client(s.port, { backoff: { initialMs: 5, maxMs: 40 } });
      const attempts = [];
      c.on('reconnecting', ({ attempt }) => attempts.push(attempt));
      c.connect().catch(() => {});
      await until(() => attempts.length >= 3, 'three reconnects');
      s.faults.clear();
      await c.connect();
      await wait(60);
      attempts.length = 0;
      s.faults.set('close=1');
      await rejectionOf(c.request(P.op));
      await until(() => attempts.length >= 1, 'a reconnect');
      assert.equal(attempts[0], 1);
    });

    it('holds one request in flight and queueMax behind it, and refuses the next with NINES_ERR_QUEUE_FULL', async () => {
      const s = await sim();
      const c = client(s.port, { queueMax: 2, timeoutMs: 5000 });
      await c.connect();
      s.faults.set('latency=100ms');
      const accepted = [c.request(P.op), c.request(P.op), c.request(P.op)];
      assert.equal(c.stats.inFlight, 1, 'written synchronously');
      assert.equal(c.stats.queued, 2);
      const err = await rejectionOf(c.request(P.op));
      assert.equal(err.code, 'NINES_ERR_QUEUE_FULL');
      assert.equal(err.details.queueMax, 2);
      for (const r of await Promise.all(accepted)) P.check(r);
      const st = c.stats;
      assert.equal(st.requests, 4);
      assert.equal(st.ok, 3);
      assert.equal(st.errors, 1);
      assert.equal(st.queueFull, 1);
      assertBalanced(st);
    });

    it('with queueMax 0, accepts only a request that can be written at once', async () => {
      const s = await sim();
      const c = client(s.port, { queueMax: 0 });
      assert.equal((await rejectionOf(c.request(P.op))).code, 'NINES_ERR_QUEUE_FULL', 'not connected: it would have to wait');
      await c.connect();
      const first = c.request(P.op);
      assert.equal((await rejectionOf(c.request(P.op))).code, 'NINES_ERR_QUEUE_FULL');
      P.check(await first);
    });

    it('times a request out from its request() call: NINES_ERR_NOT_CONNECTED while the device is away', async () => {
      const c = client(await freePort());
      const t0 = Date.now();
      const err = await rejectionOf(c.request(P.op, { timeoutMs: 80 }));
      assert.equal(err.code, 'NINES_ERR_NOT_CONNECTED');
      assert.equal(err.sentNs, undefined);
      assert.ok(Date.now() - t0 >= 75, 'not before its deadline');
      assert.equal(c.stats.notConnected, 1);
      assertBalanced(c.stats);
    });

    it('times a written request out with NINES_ERR_REPLY_TIMEOUT and sentNs, then serves the next', async () => {
      const s = await sim();
      const c = client(s.port, { timeoutMs: 60 });
      await c.connect();
      s.faults.set('drop=1');
      const err = await rejectionOf(c.request(P.op));
      assert.equal(err.code, 'NINES_ERR_REPLY_TIMEOUT');
      assert.equal(typeof err.sentNs, 'bigint');
      s.faults.clear();
      P.check(await c.request(P.op, { timeoutMs: 3000 }));
      assert.equal(c.stats.timeouts, 1);
      assertBalanced(c.stats);
    });

    it('takes a per-request timeout as a duration string: "40ms" times out after 40 ms, not the client\'s', async () => {
      const s = await sim();
      const c = client(s.port, { timeoutMs: '5s' });
      await c.connect();
      s.faults.set('drop=1');
      const t0 = Date.now();
      const err = await rejectionOf(c.request(P.op, { timeoutMs: '40ms' }));
      const took = Date.now() - t0;
      assert.equal(err.code, 'NINES_ERR_REPLY_TIMEOUT');
      assert.ok(took >= 35 && took < 2000, `${took} ms`);
      s.faults.clear();
    });

    it('with reconnect off, a failed connect goes idle and fails what waits; the next request connects again', async () => {
      const port = await freePort();
      const c = client(port, { reconnect: false });
      c.on('reconnecting', () => assert.fail('must not reconnect'));
      const err = await rejectionOf(c.request(P.op));
      assert.equal(err.code, 'NINES_ERR_NOT_CONNECTED');
      assert.equal(c.state, 'idle');
      await sim(port);
      P.check(await c.request(P.op));
      assert.equal(c.state, 'connected');
    });

    it('close() rejects the request in flight, the queued ones and connect() callers with NINES_ERR_CLOSED, once', async () => {
      const s = await sim();
      const c = client(s.port, { timeoutMs: 5000 });
      await c.connect();
      s.faults.set('drop=1');
      const inflight = rejectionOf(c.request(P.op));
      const queued = rejectionOf(c.request(P.op));
      const closing = c.close();
      assert.equal(c.close(), closing, 'idempotent');
      const [e1, e2] = await Promise.all([inflight, queued]);
      assert.equal(e1.code, 'NINES_ERR_CLOSED');
      assert.equal(typeof e1.sentNs, 'bigint');
      assert.equal(e2.code, 'NINES_ERR_CLOSED');
      assert.equal(e2.sentNs, undefined);
      await closing;
      assert.equal((await rejectionOf(c.request(P.op))).code, 'NINES_ERR_CLOSED');
      assert.equal((await rejectionOf(c.connect())).code, 'NINES_ERR_CLOSED');
      const st = c.stats;
      assert.equal(st.closed, 3);
      assertBalanced(st);
    });

    it('close() while connecting rejects connect() with NINES_ERR_CLOSED and stops retrying', async () => {
      const c = client(await freePort());
      let connecting = 0;
      c.on('reconnecting', () => connecting++);
      const waiting = rejectionOf(c.connect());
      await c.close();
      assert.equal((await waiting).code, 'NINES_ERR_CLOSED');
      await wait(50);
      assert.equal(connecting, 0);
      assert.equal(c.state, 'closed');
    });

    it('emits close (without an error) on close() only when a connection was open', async () => {
      const idle = client(1);
      let closes = 0;
      idle.on('close', () => closes++);
      await idle.close();
      assert.equal(closes, 0);
      const s = await sim();
      const c = client(s.port);
      await c.connect();
      const closed = eventOf(c, 'close');
      await c.close();
      assert.deepEqual(await closed, [undefined]);
    });
  });
}
