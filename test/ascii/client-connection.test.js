'use strict';

const assert = require('node:assert/strict');
const net = require('node:net');
const { once } = require('node:events');
const { Worker } = require('node:worker_threads');
const { AsciiClient } = require('../../gateway/drivers/ascii/client');
const { ScriptedServer, startScriptedServer, freePort, ED588 } = require('./scripted-server');
const { rejectsWith } = require('./helpers');
const { until } = require('../helpers/wait');

const FAST_BACKOFF = { initialMs: 20, maxMs: 80 };

/**
 * A listener on 127.0.0.1 whose accept queue is full, so new connects hang (SYN dropped): the
 * listening socket lives in a worker whose event loop is blocked, and filler connections take the
 * queue's slots. Returns null when the kernel does not behave that way (then the test says so).
 */
async function startBlackHole () {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(`
    const { parentPort, workerData } = require('node:worker_threads');
    const net = require('node:net');
    const srv = net.createServer();
    srv.listen({ host: '127.0.0.1', port: 0, backlog: 1 }, () => {
      parentPort.postMessage(srv.address().port);
      Atomics.wait(workerData, 0, 0);
      srv.close();
    });`, { eval: true, workerData: flag });
  const [port] = await once(worker, 'message');
  const fillers = [];
  let full = false;
  for (let i = 0; i < 8 && !full; i++) {
    const s = net.connect(port, '127.0.0.1');
    s.on('error', () => {});
    fillers.push(s);
    full = await new Promise((resolve) => {
      const t = setTimeout(() => resolve(true), 300);
      s.once('connect', () => { clearTimeout(t); resolve(false); });
    });
  }
  const stop = async () => {
    for (const s of fillers) s.destroy();
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    await worker.terminate();
  };
  return { port, full, stop };
}

describe('ascii client: connecting, dropping, reconnecting', function () {
  let server;
  let client;

  afterEach(async () => {
    if (client) await client.close();
    if (server) await server.close();
    client = null;
    server = null;
  });

  it('rejects connect() with NINES_ERR_CONNECT_FAILED when refused, and keeps retrying with backoff', async () => {
    const port = await freePort();
    client = new AsciiClient(`ascii://127.0.0.1:${port}`, { backoff: FAST_BACKOFF });
    const attempts = [];
    client.on('reconnecting', (info) => attempts.push(info));
    const err = await rejectsWith(client.connect(), 'NINES_ERR_CONNECT_FAILED');
    assert.equal(err.details.cause, 'ECONNREFUSED');
    await until(() => attempts.length >= 3);
    assert.deepEqual(attempts.slice(0, 3).map((a) => a.attempt), [1, 2, 3]);
    for (const a of attempts) assert.ok(a.delayMs >= FAST_BACKOFF.initialMs / 2 && a.delayMs <= FAST_BACKOFF.maxMs);
    assert.equal(client.state, 'reconnecting');
    assert.ok(client.stats.connectFailures >= 3);
  });

  it('connects once the device appears, and sends the requests queued meanwhile', async () => {
    const port = await freePort();
    client = new AsciiClient(`ascii://127.0.0.1:${port}`, { backoff: FAST_BACKOFF, timeoutMs: 5000 });
    const pending = client.request('$01M');
    await until(() => client.stats.connectFailures >= 2);
    server = new ScriptedServer((line) => ED588[line]);
    await server.listen(port);
    assert.equal((await pending).name, 'ED-588');
  });

  it('emits error events only to listeners and never crashes without one', async () => {
    const port = await freePort();
    client = new AsciiClient(`ascii://127.0.0.1:${port}`, { backoff: FAST_BACKOFF });
    client.connect().catch(() => {});
    await until(() => client.stats.connectFailures >= 2);
    const errors = [];
    client.on('error', (e) => errors.push(e.code));
    await until(() => errors.length >= 1);
    assert.equal(errors[0], 'NINES_ERR_CONNECT_FAILED');
  });

  it('times a request out with NINES_ERR_NOT_CONNECTED while it cannot connect', async () => {
    const port = await freePort();
    client = new AsciiClient(`ascii://127.0.0.1:${port}`, { backoff: FAST_BACKOFF });
    const err = await rejectsWith(client.request('@01', { timeoutMs: 100 }), 'NINES_ERR_NOT_CONNECTED');
    assert.equal(err.details.written, false);
  });

  it('with reconnect off, fails waiting requests with NINES_ERR_NOT_CONNECTED and goes back to idle', async () => {
    const port = await freePort();
    client = new AsciiClient(`ascii://127.0.0.1:${port}`, { reconnect: false });
    let retries = 0;
    client.on('reconnecting', () => retries++);
    const err = await rejectsWith(client.request('@01'), 'NINES_ERR_NOT_CONNECTED');
    assert.equal(err.details.cause, 'ECONNREFUSED');
    assert.equal(client.state, 'idle');
    await rejectsWith(client.connect(), 'NINES_ERR_CONNECT_FAILED');
    assert.equal(retries, 0);
  });

  it('rejects connect() with NINES_ERR_CONNECT_TIMEOUT when the device never accepts', async function () {
    const hole = await startBlackHole();
    try {
      assert.ok(hole.full, 'could not fill the accept queue of a loopback listener');
      client = new AsciiClient(`ascii://127.0.0.1:${hole.port}`, { connectTimeoutMs: 150, reconnect: false });
      const err = await rejectsWith(client.connect(), 'NINES_ERR_CONNECT_TIMEOUT');
      assert.equal(err.details.connectTimeoutMs, 150);
      assert.equal(client.state, 'idle');
    } finally {
      if (client) await client.close();
      await hole.stop();
    }
  });

  it('fails the in-flight request with NINES_ERR_CONNECTION_CLOSED when the device goes away, then reconnects', async () => {
    server = await startScriptedServer((line) => (line === '$01M' ? null : ED588[line]));
    const port = server.port;
    client = new AsciiClient(`ascii://127.0.0.1:${port}`, { backoff: FAST_BACKOFF, timeoutMs: 5000 });
    const closes = [];
    const attempts = [];
    client.on('close', (e) => closes.push(e && e.code));
    client.on('reconnecting', (a) => attempts.push(a));
    assert.equal((await client.request('@01')).value, 0xff);

    const inflight = client.request('$01M');
    await until(() => server.lines.includes('$01M'));
    await server.kill();
    const err = await rejectsWith(inflight, 'NINES_ERR_CONNECTION_CLOSED');
    assert.equal(typeof err.sentNs, 'bigint');
    assert.deepEqual(closes, ['NINES_ERR_CONNECTION_CLOSED']);

    const queued = client.request('@01'); // waits while the device is away
    await until(() => attempts.length >= 3); // refused a few times, backing off
    await server.listen(port);
    assert.equal((await queued).value, 0xff);
    assert.equal((await client.request('@01')).value, 0xff);
    assert.equal(client.state, 'connected');
    assert.equal(client.stats.drops, 1);
    assert.ok(client.stats.reconnects >= 3);
  });

  it('treats a connection closed by the device between requests as a drop and reconnects', async () => {
    server = await startScriptedServer((line) => (line === '$01Z' ? { end: true } : ED588[line]));
    client = new AsciiClient(`ascii://127.0.0.1:${server.port}`, { backoff: FAST_BACKOFF, timeoutMs: 3000 });
    await rejectsWith(client.request('$01Z'), 'NINES_ERR_CONNECTION_CLOSED');
    assert.equal((await client.request('@01')).value, 0xff);
    assert.equal(server.connections, 2);
  });

  it('close() during a connection attempt stops everything', async () => {
    const port = await freePort();
    client = new AsciiClient(`ascii://127.0.0.1:${port}`, { backoff: FAST_BACKOFF });
    const p = assert.rejects(client.connect(), (e) => ['NINES_ERR_CLOSED', 'NINES_ERR_CONNECT_FAILED'].includes(e.code));
    const q = rejectsWith(client.request('@01'), 'NINES_ERR_CLOSED');
    await client.close();
    await p;
    await q;
    assert.equal(client.state, 'closed');
  });
});
