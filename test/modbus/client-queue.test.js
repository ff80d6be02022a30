'use strict';

// One request on the wire, a bounded FIFO behind it, a timeout per request from the request() call,
// close(), and validation at the boundary.

const assert = require('node:assert/strict');
const { createClient, ModbusClient, parseOpString } = require('../../gateway/drivers/modbus');
const { startRawServer, registersPdu, answer, rejectionOf, eventOf, freePort } = require('./helpers');

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe('modbus client: queue, timeouts and close', () => {
  const cleanup = [];
  afterEach(async () => {
    while (cleanup.length) await cleanup.pop()();
  });

  /** A raw server that holds every request until release() answers them all, in order. */
  async function holdingServer () {
    const held = [];
    const srv = await startRawServer((req) => held.push(req));
    cleanup.push(() => srv.close());
    srv.release = () => {
      for (const req of held.splice(0)) req.socket.write(answer(req, registersPdu(req.pdu)));
    };
    srv.held = held;
    return srv;
  }

  function client (port, opts) {
    const c = createClient(`modbus+tcp://127.0.0.1:${port}`, opts);
    cleanup.push(() => c.close());
    return c;
  }

  it('keeps one request on the wire and the rest in FIFO order', async () => {
    const order = [];
    const srv = await startRawServer((req) => {
      order.push(req.pdu.readUInt16BE(1));
      setTimeout(() => req.socket.write(answer(req, registersPdu(req.pdu))), 2);
    });
    cleanup.push(() => srv.close());
    const c = client(srv.port);
    await c.connect();
    const replies = await Promise.all([0, 1, 2, 3, 4].map((a) => c.request(`3:${a}:1`)));
    assert.deepEqual(order, [0, 1, 2, 3, 4]);
    assert.deepEqual(replies.map((r) => r.data[0]), [0, 1, 2, 3, 4]);
  });

  it('rejects at once with NINES_ERR_QUEUE_FULL beyond queueMax, counting it, and serves the rest', async () => {
    const srv = await holdingServer();
    const c = client(srv.port, { queueMax: 2 });
    await c.connect();
    const op = parseOpString('3:0:1');
    const accepted = [c.request(op), c.request(op), c.request(op)];
    const err = await rejectionOf(c.request(op));
    assert.equal(err.code, 'NINES_ERR_QUEUE_FULL');
    assert.equal(err.details.queueMax, 2);
    assert.equal(c.stats.queueFull, 1);
    assert.equal(c.stats.queued, 2);
    assert.equal(c.stats.inFlight, 1);
    while (srv.held.length < 1) await wait(1);
    assert.equal(srv.held.length, 1, 'only one request on the wire');
    for (let i = 0; i < 3; i++) {
      while (srv.held.length === 0) await wait(1);
      srv.release();
    }
    assert.equal((await Promise.all(accepted)).length, 3);
    const s = c.stats;
    assert.equal(s.requests, 4);
    assert.equal(s.ok, 3);
    assert.equal(s.errors, 1);
  });

  it('with queueMax 0, only the request in flight is accepted', async () => {
    const srv = await holdingServer();
    const c = client(srv.port, { queueMax: 0 });
    await c.connect();
    const first = c.request('3:0:1');
    assert.equal((await rejectionOf(c.request('3:0:1'))).code, 'NINES_ERR_QUEUE_FULL');
    while (srv.held.length === 0) await wait(1);
    srv.release();
    await first;
  });

  it('times a queued request out from its request() call: NINES_ERR_REPLY_TIMEOUT without sentNs', async () => {
    const srv = await holdingServer();
    const c = client(srv.port, { timeoutMs: 2000 });
    await c.connect();
    const first = c.request('3:0:1');
    const queued = c.request('3:1:1', { timeoutMs: 50 });
    const err = await rejectionOf(queued);
    assert.equal(err.code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.equal(err.details.queued, true);
    assert.equal(err.sentNs, undefined);
    assert.equal(c.stats.queued, 0);
    srv.release();
    await first;
    assert.equal(srv.requests.length, 1, 'the timed-out request was never sent');
  });

  it('times a written request out with NINES_ERR_REPLY_TIMEOUT carrying sentNs, and sends the next one', async () => {
    const srv = await holdingServer();
    const c = client(srv.port);
    await c.connect();
    const first = c.request('3:0:1', { timeoutMs: 40 });
    const second = c.request('3:1:1', { timeoutMs: 5000 });
    const err = await rejectionOf(first);
    assert.equal(err.code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.equal(typeof err.sentNs, 'bigint');
    assert.match(err.message, /within 40 ms/);
    while (srv.held.length < 2) await wait(1);
    srv.release();
    assert.deepEqual((await second).data, [1]);
    assert.equal(c.stats.lateReplies, 1);
    assert.equal(c.stats.timeouts, 1);
  });

  it('counts the time spent queued in the request timeout', async () => {
    const srv = await startRawServer((req) => setTimeout(() => req.socket.write(answer(req, registersPdu(req.pdu))), 200));
    cleanup.push(() => srv.close());
    const c = client(srv.port, { timeoutMs: 300 });
    await c.connect();
    const first = c.request('3:0:1');
    const second = c.request('3:1:1');
    await first;
    // 200 ms queued + 200 ms on the wire > 300 ms
    assert.equal((await rejectionOf(second)).code, 'NINES_ERR_REPLY_TIMEOUT');
  });

  it('starts connecting on a request to an idle client, queueing until connected', async () => {
    const srv = await startRawServer((req) => req.socket.write(answer(req, registersPdu(req.pdu))));
    cleanup.push(() => srv.close());
    const c = client(srv.port);
    assert.equal(c.state, 'idle');
    const p = c.request('3:3:1');
    assert.equal(c.state, 'connecting');
    assert.equal(c.stats.queued, 1);
    assert.deepEqual((await p).data, [3]);
  });

  it('close() rejects the request in flight and the queued ones with NINES_ERR_CLOSED, then refuses new work', async () => {
    const srv = await holdingServer();
    const c = client(srv.port);
    await c.connect();
    const closeEvent = eventOf(c, 'close');
    const inflight = c.request('3:0:1');
    const queued = c.request('3:1:1');
    const closing = c.close();
    assert.equal(c.close(), closing, 'close() is idempotent');
    const [e1, e2] = await Promise.all([rejectionOf(inflight), rejectionOf(queued)]);
    assert.equal(e1.code, 'NINES_ERR_CLOSED');
    assert.equal(typeof e1.sentNs, 'bigint');
    assert.equal(e2.code, 'NINES_ERR_CLOSED');
    await closing;
    assert.deepEqual(await closeEvent, [undefined]);
    assert.equal(c.state, 'closed');
    assert.equal((await rejectionOf(c.request('3:0:1'))).code, 'NINES_ERR_CLOSED');
    assert.equal((await rejectionOf(c.connect())).code, 'NINES_ERR_CLOSED');
    const s = c.stats;
    assert.equal(s.closed, 3);
    assert.equal(s.requests, s.ok + s.errors + s.timeouts + s.queued + s.inFlight);
  });

  it('close() while connecting rejects connect() with NINES_ERR_CLOSED', async () => {
    const c = client(await freePort());
    const rejected = rejectionOf(c.connect());
    await c.close();
    assert.equal((await rejected).code, 'NINES_ERR_CLOSED');
  });

  it('rejects an invalid op or option with a coded error, never a throw', async () => {
    const c = client(await freePort(), { reconnect: false });
    const e1 = await rejectionOf(c.request({ fc: 3, address: -1, quantity: 1 }));
    assert.equal(e1.code, 'NINES_ERR_INVALID_OP');
    assert.equal(e1.details.field, 'address');
    assert.equal((await rejectionOf(c.request('nonsense'))).code, 'NINES_ERR_INVALID_OP');
    assert.equal((await rejectionOf(c.request(null))).code, 'NINES_ERR_INVALID_OP');
    const e2 = await rejectionOf(c.request('3:0:1', { timeoutMs: -5 }));
    assert.equal(e2.code, 'NINES_ERR_INVALID_ARG');
    assert.equal(e2.details.field, 'timeoutMs');
    assert.equal(c.stats.invalid, 4);
    assert.equal(c.stats.requests, 0);
    assert.equal(c.state, 'idle', 'an invalid request does not connect');
  });
});

describe('modbus client: options and factory', () => {
  /** Asserts the constructor throws NINES_ERR_INVALID_ARG naming `field`. */
  function badOption (opts, field) {
    assert.throws(() => new ModbusClient('modbus+tcp://127.0.0.1:502', opts), (err) => {
      assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
      assert.equal(err.details.field, field);
      assert.match(err.message, new RegExp(field.replace('.', '\\.')));
      return true;
    });
  }

  it('validates every option, naming it', () => {
    badOption({ timeoutMs: 0 }, 'timeoutMs');
    badOption({ timeoutMs: 1.5 }, 'timeoutMs');
    badOption({ timeoutMs: 2 ** 31 }, 'timeoutMs');
    badOption({ connectTimeoutMs: 'soon' }, 'connectTimeoutMs');
    badOption({ queueMax: -1 }, 'queueMax');
    badOption({ reconnect: 'yes' }, 'reconnect');
    badOption({ backoff: { initialMs: 0 } }, 'backoff.initialMs');
    badOption({ backoff: { initialMs: 100, maxMs: 50 } }, 'backoff.maxMs');
    badOption({ backoff: { factor: 3 } }, 'backoff.factor');
    badOption({ backoff: 5 }, 'backoff');
    badOption({ random: 0.5 }, 'random');
    badOption({ keepAliveMs: -1 }, 'keepAliveMs');
    badOption({ silenceUs: -1 }, 'silenceUs');
    badOption({ quietMs: -1 }, 'quietMs');
    badOption({ drainMs: 50 }, 'drainMs');
    badOption({ loadSerialPort: 'serialport' }, 'loadSerialPort');
    badOption({ timeout: 500 }, 'timeout');
    badOption('fast', 'options');
  });

  it('accepts the documented defaults', () => {
    const c = new ModbusClient('modbus+tcp://127.0.0.1:502', { timeoutMs: 1000, connectTimeoutMs: 5000, queueMax: 64, reconnect: true, backoff: { initialMs: 100, maxMs: 10000 }, random: Math.random });
    assert.equal(c.state, 'idle');
    assert.equal(c.target.unitId, 1);
  });

  it('createClient takes modbus+tcp and modbus+rtu targets, as URLs or parsed', () => {
    const { parseTarget } = require('../../gateway/drivers/target');
    assert.ok(createClient('modbus+tcp://127.0.0.1:1502?unitId=3') instanceof ModbusClient);
    assert.ok(createClient(parseTarget('modbus+rtu:///dev/ttyUSB0?baudRate=19200')) instanceof ModbusClient);
  });

  it('createClient rejects other schemes and bad URLs with NINES_ERR_INVALID_TARGET', () => {
    for (const bad of ['ascii://127.0.0.1:9500', 'http://x', 'modbus+tcp://', 42]) {
      assert.throws(() => createClient(bad), (err) => err.code === 'NINES_ERR_INVALID_TARGET', String(bad));
    }
  });
});
