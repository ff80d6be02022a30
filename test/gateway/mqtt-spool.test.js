'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const mqtt = require('mqtt');
const { Publisher } = require('../../gateway/runtime/mqtt/publisher');
const { startEmbeddedBroker } = require('../../gateway/runtime/mqtt/broker');
const { freePort } = require('../helpers/mosquitto');
const { until } = require('../helpers/wait');

/**
 * The publisher with a disk spool, and values through the ordered buffer (issue 12 store and
 * forward, issue 14 item 6), against the embedded broker. Waits are bounded conditions, never timing.
 */

async function subscriber (url, topic = 'nines/#') {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0 });
  const messages = [];
  client.on('message', (t, payload) => messages.push({ topic: t, json: JSON.parse(payload.toString()) }));
  await client.subscribeAsync(topic, { qos: 1 });
  return { messages, on: (t) => messages.filter((m) => m.topic === t), end: () => client.endAsync(true) };
}

describe('gateway/runtime/mqtt/publisher with a spool', function () {
  this.timeout(20000);
  let dir;
  let cleanups;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-pub-spool-'));
    cleanups = [];
  });
  afterEach(async () => {
    for (const fn of cleanups.reverse()) await fn().catch(() => {});
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const publisher = (url, opts = {}) => {
    const p = new Publisher({
      url, gatewayId: 'gw', connectTimeoutMs: 500, reconnectInitialMs: 50, reconnectMaxMs: 100,
      spool: { dir, maxBytes: 2 * 1024 * 1024, syncIntervalMs: 5 }, ...opts
    });
    p.on('error', () => {});
    cleanups.push(() => p.stop());
    return p;
  };

  it('what a stopped publisher could not send waits on disk; the next one sends it first, in order, and knows where each stream stands', async () => {
    const port = await freePort();
    const url = `mqtt://127.0.0.1:${port}`;
    const p1 = publisher(url);
    await p1.start(); // no broker yet
    for (let seq = 0; seq < 20; seq++) p1.publishLatency('job-a', { seq, start: seq * 100, end: (seq + 1) * 100 });
    p1.publishLatency('job-b', { seq: 7, start: 0, end: 50 });
    await until(() => p1.stats.spool.latency.records === 21, 'the summaries on disk');
    await p1.stop();
    assert.equal(p1.stats.dropped, 0, 'kept, not dropped');

    const broker = await startEmbeddedBroker({ port });
    cleanups.push(() => broker.close());
    const s = await subscriber(url);
    cleanups.push(() => s.end());
    const p2 = publisher(url);
    await p2.start();
    assert.deepEqual(Object.fromEntries(p2.resumePoints()), { 'job-a': { seq: 19, end: 2000 }, 'job-b': { seq: 7, end: 50 } });
    p2.publishLatency('job-a', { seq: 20, start: 2000, end: 2100 });
    await until(() => s.on('nines/gw/job-a/latency').length === 21, 'every summary of job-a');
    assert.deepEqual(s.on('nines/gw/job-a/latency').map((m) => m.json.seq), Array.from({ length: 21 }, (_, i) => i));
    await until(() => p2.stats.spool.latency.records === 0, 'acknowledged off the spool');
  });

  it('values wait in order while the broker is away, each with its read time; none are thinned to the latest', async () => {
    const port = await freePort();
    const url = `mqtt://127.0.0.1:${port}`;
    const p = publisher(url, { valuesMinIntervalMs: 0 });
    await p.start();
    for (let i = 0; i < 50; i++) p.publishValue('job-a', { ts: 1000 + i, values: [i] });
    const broker = await startEmbeddedBroker({ port });
    cleanups.push(() => broker.close());
    const s = await subscriber(url);
    cleanups.push(() => s.end());
    await until(() => s.on('nines/gw/job-a/value').length === 50, 'the 50 values');
    assert.deepEqual(s.on('nines/gw/job-a/value').map((m) => m.json.ts), Array.from({ length: 50 }, (_, i) => 1000 + i));
    assert.equal(p.stats.valuesDropped, 0);
  });

  it('without a spool, values that outgrow the memory buffer are dropped oldest first and counted in the status as droppedValues', async () => {
    const port = await freePort();
    const url = `mqtt://127.0.0.1:${port}`;
    const p = publisher(url, { valuesMinIntervalMs: 0, bufferMax: 10, spool: undefined });
    await p.start();
    for (let i = 0; i < 25; i++) p.publishValue('job-a', { ts: i, values: [i] });
    assert.equal(p.stats.valuesDropped, 15);
    const broker = await startEmbeddedBroker({ port });
    cleanups.push(() => broker.close());
    const s = await subscriber(url);
    cleanups.push(() => s.end());
    await until(() => s.on('nines/gw/job-a/value').length === 10, 'the newest 10');
    assert.deepEqual(s.on('nines/gw/job-a/value').map((m) => m.json.ts), Array.from({ length: 10 }, (_, i) => 15 + i));
    const late = await subscriber(url, 'nines/gw/status');
    cleanups.push(() => late.end());
    await until(() => late.messages.length > 0, 'the retained status');
    assert.deepEqual(late.messages[0].json.droppedValues, { total: 15, jobs: { 'job-a': 15 } });
  });

  it('drops counted before a restart are still in the status after it (a gap in the stream stays explained)', async () => {
    const port = await freePort();
    const url = `mqtt://127.0.0.1:${port}`;
    const p1 = publisher(url, { spool: { dir, maxBytes: 1024 * 1024, syncIntervalMs: 5 } });
    await p1.start();
    // half of 1 MiB for summaries of about 3 KB: the oldest go
    const pad = 'x'.repeat(3000);
    for (let seq = 0; seq < 400; seq++) p1.publishLatency('job-a', { seq, end: seq, pad });
    const dropped = p1.stats.dropped;
    assert.ok(dropped > 0, 'the spool was full');
    await p1.stop();
    const broker = await startEmbeddedBroker({ port });
    cleanups.push(() => broker.close());
    const s = await subscriber(url);
    cleanups.push(() => s.end());
    const p2 = publisher(url, { spool: { dir, maxBytes: 1024 * 1024, syncIntervalMs: 5 } });
    await p2.start();
    await until(() => s.on('nines/gw/job-a/latency').length === 400 - dropped, 'what the spool kept');
    assert.deepEqual(s.on('nines/gw/job-a/latency').map((m) => m.json.seq)[0], dropped);
    const online = s.on('nines/gw/status').filter((m) => m.json.state === 'online').pop();
    assert.deepEqual(online.json.dropped, { total: dropped, jobs: { 'job-a': dropped } });
  });
});
