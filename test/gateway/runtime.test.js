'use strict';

/**
 * The gateway end to end: real simulators, real worker threads, a real Mosquitto, and a plain
 * mqtt.js subscriber that knows nothing of nines.
 */

const assert = require('node:assert/strict');
const mqtt = require('mqtt');
const { Gateway } = require('../../gateway/runtime/gateway');
const { validateConfig } = require('../../gateway/runtime/config');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseLatencyPayload, summarize, readHlog } = require('../../gateway/latency');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { startMosquitto } = require('../helpers/mosquitto');
const { until } = require('../helpers/wait');

const PREFIX = 'nines-test';

function configFor ({ brokerUrl, ascii, modbus, id = 'gw-test', interval = '300ms', bufferMax, timeout = '200ms', hlog }) {
  return validateConfig({
    gateway: { id, interval, workers: 1, ...(hlog ? { hlog } : {}) },
    mqtt: { url: brokerUrl, prefix: PREFIX, ...(bufferMax ? { buffer: bufferMax } : {}) },
    devices: {
      ed588: { target: ascii.url, timeout },
      plc: { target: modbus.url, timeout }
    },
    jobs: [
      { name: 'inputs', device: 'ed588', command: '@01', rate: '200/s' },
      { name: 'hr', device: 'plc', read: { fc: 3, address: 0, quantity: 10 }, rate: '200/s' }
    ]
  });
}

/** a plain subscriber collecting every message under the prefix */
async function subscribe (url) {
  const client = mqtt.connect(url, { reconnectPeriod: 200 });
  const got = { latency: new Map(), status: [] };
  client.on('message', (topic, payload, packet) => {
    const parts = topic.split('/');
    if (parts[2] === 'status') got.status.push({ retain: packet.retain, body: JSON.parse(payload.toString()) });
    else if (parts[3] === 'latency') {
      const job = parts[2];
      if (!got.latency.has(job)) got.latency.set(job, []);
      got.latency.get(job).push(JSON.parse(payload.toString()));
    }
  });
  await new Promise((resolve, reject) => { client.once('connect', resolve); client.once('error', reject); });
  await client.subscribeAsync(`${PREFIX}/#`, { qos: 1 });
  return { client, got };
}

describe('gateway runtime with a real Mosquitto', function () {
  this.timeout(30000);
  let broker, ascii, modbus, sub, gw;

  beforeEach(async () => {
    broker = await startMosquitto();
    ascii = await createAsciiSimulator({ port: 0 });
    modbus = await createModbusTcpSimulator({ port: 0 });
  });
  afterEach(async () => {
    if (gw) await gw.stop().catch(() => {});
    if (sub) await sub.client.endAsync();
    // a beforeEach that failed part-way (no mosquitto) leaves the rest undefined
    if (ascii) await ascii.close();
    if (modbus) await modbus.close();
    if (broker) await broker.stop();
    gw = sub = ascii = modbus = broker = null;
  });

  it('publishes the retained status and one latency summary per job per interval, seq contiguous, hist decodes to the published figures', async () => {
    sub = await subscribe(broker.url);
    gw = new Gateway(configFor({ brokerUrl: broker.url, ascii, modbus }));
    await gw.start();
    await until(() => ['inputs', 'hr'].every((j) => (sub.got.latency.get(j) || []).length >= 4));
    await gw.stop();
    await until(() => sub.got.status.some((s) => s.body.state === 'offline'));
    gw = null;

    const online = sub.got.status.find((s) => s.body.state === 'online');
    assert.ok(online, 'online status seen');
    assert.deepEqual(online.body.jobs.map((j) => (typeof j === 'string' ? j : j.name)).sort(), ['hr', 'inputs']);
    for (const job of ['inputs', 'hr']) {
      const msgs = sub.got.latency.get(job);
      msgs.forEach((m, i) => assert.equal(m.seq, i, `${job} seq ${m.seq} at position ${i}`));
      for (const m of msgs) {
        const p = parseLatencyPayload(m);
        const s = summarize(p.histogram);
        for (const k of ['p50', 'p99', 'max']) assert.equal(s[k], m[k], `${job} seq ${m.seq} ${k}: decoded ${s[k]}, published ${m[k]}`);
        assert.equal(p.histogram.totalCount, m.count);
        assert.equal(m.gateway, 'gw-test');
      }
      assert.ok(msgs.slice(0, -1).every((m) => m.ok > 0), `${job} polled every interval`);
    }
    // the retained status is still there for a late subscriber: offline, as the gateway left it
    const late = mqtt.connect(broker.url);
    const retained = await new Promise((resolve) => {
      late.on('message', (t, p, packet) => resolve({ body: JSON.parse(p.toString()), retain: packet.retain }));
      late.on('connect', () => late.subscribe(`${PREFIX}/gw-test/status`));
    });
    await late.endAsync();
    assert.equal(retained.retain, true);
    assert.equal(retained.body.state, 'offline');
  });

  it('keeps polling while the broker is down and delivers the buffered summaries in order afterwards', async () => {
    gw = new Gateway(configFor({ brokerUrl: broker.url, ascii, modbus, interval: '200ms' }));
    const seen = [];
    gw.on('summary', (job, p) => { if (job === 'inputs') seen.push(p); });
    await gw.start();
    await until(() => seen.length >= 2);
    const port = broker.port;
    await broker.kill();
    const before = seen.length;
    await new Promise((resolve) => setTimeout(resolve, 1200));
    assert.ok(seen.length >= before + 3, 'summaries keep coming while the broker is down');
    assert.ok(seen.slice(before).every((p) => p.ok > 0), 'polling never stopped');
    broker = await startMosquitto({ port });
    sub = await subscribe(broker.url);
    const upTo = seen.length;
    await until(() => (sub.got.latency.get('inputs') || []).some((m) => m.seq >= upTo + 1), 'a summary after the broker came back', 15000);
    const got = sub.got.latency.get('inputs').map((m) => m.seq);
    // everything from the outage was buffered (bufferMax 1000): nothing dropped, and what arrives
    // comes in order without a gap (the subscriber may subscribe after the first flushed ones)
    assert.equal(gw.publisher.stats.dropped, 0);
    const start = got[0];
    got.forEach((s, i) => assert.equal(s, start + i, `no gap: ${got.join(',')}`));
    assert.ok(gw.publisher.stats.published >= upTo, `published ${gw.publisher.stats.published} of ${upTo}`);
  });

  it('when the buffer overflows during an outage, the drops are counted and the status explains the seq gap', async () => {
    gw = new Gateway(configFor({ brokerUrl: broker.url, ascii, modbus, interval: '150ms', bufferMax: 2 }));
    let last = 0;
    gw.on('summary', (job, p) => { if (job === 'inputs') last = p.seq; });
    await gw.start();
    await until(() => last >= 1);
    const port = broker.port;
    await broker.kill();
    const down = last;
    await until(() => last >= down + 8);
    broker = await startMosquitto({ port });
    sub = await subscribe(broker.url);
    await until(() => sub.got.status.some((s) => s.body.state === 'online' && s.body.dropped.total > 0 && s.body.dropped.jobs.inputs > 0), 'an online status counting the dropped summaries', 15000);
    await until(() => (sub.got.latency.get('inputs') || []).length >= 3, 'three summaries of inputs', 15000);
    const seqs = sub.got.latency.get('inputs').map((m) => m.seq);
    assert.ok(seqs.some((s, i) => i > 0 && s > seqs[i - 1] + 1) || seqs[0] > down + 1, `a gap is visible: ${seqs.join(',')}`);
    assert.ok(gw.publisher.stats.dropped > 0);
  });

  it('counts a dead device as errors/timeouts and recovers when it comes back', async () => {
    gw = new Gateway(configFor({ brokerUrl: broker.url, ascii, modbus, interval: '200ms' }));
    const seen = [];
    gw.on('summary', (job, p) => { if (job === 'inputs') seen.push(p); });
    await gw.start();
    await until(() => seen.length >= 2);
    const port = ascii.port;
    await ascii.close();
    await until(() => seen.some((p) => p.errors + p.timeouts > 0));
    ascii = await createAsciiSimulator({ port });
    const mark = seen.length;
    await until(() => seen.slice(mark).some((p) => p.ok > 0 && p.errors + p.timeouts === 0), 'a clean summary after the device came back', 15000);
    const bad = seen.find((p) => p.errors + p.timeouts > 0);
    assert.equal(bad.count, bad.ok + bad.errors + bad.timeouts + bad.skipped, 'failures are samples in the count');
  });

  it('writes each job\'s intervals as an HdrHistogram log that reads back to the published counts', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-hlog-'));
    try {
      gw = new Gateway(configFor({ brokerUrl: broker.url, ascii, modbus, interval: '200ms', hlog: dir }));
      const published = [];
      gw.on('summary', (job, p) => { if (job === 'inputs') published.push(p); });
      await gw.start();
      await until(() => published.length >= 3);
      await gw.stop();
      gw = null;
      const files = fs.readdirSync(dir).sort();
      assert.equal(files.length, 2);
      assert.match(files[1], /^inputs-.*\.hlog$/);
      const text = fs.readFileSync(path.join(dir, files[1]), 'utf8');
      assert.match(text, /^#\[Histogram log format version 1\.3\]$/m);
      assert.match(text, /^#\[StartTime: \d+\.\d{3} \(seconds since epoch\)/m);
      const intervals = readHlog(text);
      const responses = intervals.filter((i) => i.tag === 'response');
      assert.equal(responses.length, published.length);
      assert.deepEqual(intervals.filter((i) => i.tag === 'service').length, published.length);
      responses.forEach((r, i) => assert.equal(r.histogram.totalCount, published[i].count));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('restarts a worker that dies and reports the death', async () => {
    gw = new Gateway(configFor({ brokerUrl: broker.url, ascii, modbus, interval: '200ms' }));
    const exits = [];
    const seen = [];
    gw.on('worker-exit', (info) => exits.push(info));
    gw.on('summary', (job, p) => { if (job === 'hr') seen.push(p); });
    await gw.start();
    await until(() => seen.length >= 1);
    await gw.pool.killWorker(0);
    await until(() => exits.length === 1);
    assert.deepEqual(exits[0].jobs.sort(), ['hr', 'inputs']);
    const mark = seen.length;
    await until(() => seen.length >= mark + 2, 'two summaries after the worker restart', 15000);
    // seq stays contiguous across the restart: the main thread numbers it
    seen.forEach((p, i) => assert.equal(p.seq, i));
  });
});
