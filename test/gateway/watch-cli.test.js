'use strict';

/**
 * `nines watch` as a session (gateway/cli/watch.js runWatch): its broker URL check, its broker
 * errors, and its output to a terminal and to a file, against an embedded broker on port 0.
 */

const assert = require('node:assert/strict');
const net = require('node:net');
const { once } = require('node:events');
const mqtt = require('mqtt');
const { runWatch } = require('../../gateway/cli/watch');
const { startEmbeddedBroker } = require('../../gateway/runtime/mqtt/broker');
const { Recorder, latencyPayload } = require('../../gateway/latency');
const { until } = require('../helpers/wait');

/** A writable that keeps what was written */
function sink (isTTY = false) {
  const s = { isTTY, text: '', write (chunk) { s.text += chunk; return true; } };
  return s;
}

/** A summary of n requests of `ms`, dispatch lag `lagMs` */
function summary (gateway, job, seq, { n = 50, ms = 2, lagMs = 0.5 } = {}) {
  const rec = new Recorder({ policy: 'capped' });
  for (let i = 0; i < n; i++) rec.recordOk(ms * 1e6, ms * 1e6, lagMs * 1e6);
  return JSON.stringify(latencyPayload({ ...rec.snapshot(), seq }, { gateway, job, target: 'ascii://x:9500', op: '@AA' }));
}

describe('nines watch', function () {
  this.timeout(20000);
  let cleanups;
  beforeEach(() => { cleanups = []; });
  afterEach(async () => { for (const fn of cleanups.reverse()) await fn(); });

  /** Starts runWatch; stop() ends it and resolves to its exit code */
  function watch (opts) {
    const ac = new AbortController();
    const done = runWatch({ refreshMs: 50, signal: ac.signal, ...opts });
    const stop = async () => { ac.abort(); return done; };
    cleanups.push(() => stop().catch(() => {}));
    return { stop, done };
  }

  it('refuses a URL that is not an MQTT broker URL, with a code, before connecting', async () => {
    for (const url of ['http://127.0.0.1:1883', 'ftp://broker', 'broker:1883']) {
      await assert.rejects(runWatch({ url, durationMs: 10, stdout: sink(), stderr: sink() }), (err) => {
        assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
        assert.match(err.message, /broker URL/);
        return true;
      }, url);
    }
  });

  it('says a broker error once, with its code, while it retries with backoff', async () => {
    // a "broker" that accepts and drops every connection: each attempt fails the same way
    let attempts = 0;
    const server = net.createServer((s) => { attempts++; s.destroy(); });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const stderr = sink();
    const w = watch({ url: `mqtt://127.0.0.1:${server.address().port}`, stdout: sink(), stderr, backoff: { initialMs: 10, maxMs: 40 } });
    await until(() => attempts >= 5, 'five attempts');
    await w.stop();
    const lines = stderr.text.trim().split('\n');
    assert.equal(lines.length, 1, stderr.text);
    assert.match(lines[0], /^nines watch: NINES_ERR_MQTT: mqtt:\/\/127\.0\.0\.1:\d+: .+ \(retrying with backoff up to 0\.04 s\)$/);
  });

  it('redirected to a file, prints each new merged interval once, with its lag p99, and no table', async () => {
    const broker = await startEmbeddedBroker({ port: 0 });
    cleanups.push(() => broker.close());
    const stdout = sink(false);
    const w = watch({ url: broker.url, stdout, stderr: sink() });
    const pub = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    cleanups.push(() => pub.endAsync(true));
    // retained: the watch gets it once, whenever it subscribes
    await pub.publishAsync('nines/gw-a/plc/latency', summary('gw-a', 'plc', 0), { qos: 1, retain: true });
    await until(() => /plc gateway=gw-a/.test(stdout.text), 'the first row');
    await new Promise((resolve) => setTimeout(resolve, 200)); // several refreshes with nothing new
    // the watch is subscribed now (it printed a row): a live publish reaches it once
    await pub.publishAsync('nines/gw-b/plc/latency', summary('gw-b', 'plc', 0, { lagMs: 4 }), { qos: 1 });
    await until(() => /gateway=2_gateways/.test(stdout.text), 'the merged row');
    await w.stop();
    const lines = stdout.text.trim().split('\n');
    assert.match(lines[0], /^# nines watch mqtt:\/\/127\.0\.0\.1:\d+ nines\/\+\/\+\/latency/);
    const rows = lines.slice(1).filter((l) => / plc gateway=/.test(l));
    assert.equal(rows.length, 2, stdout.text);
    assert.match(rows[0], /^\S+Z plc gateway=gw-a .* count=50 .* lag\.p99=0\.500 ms$/);
    assert.match(rows[1], /^\S+Z plc gateway=2_gateways .* count=100 .* lag\.p99=4\.00\d ms$/);
    assert.ok(!stdout.text.includes('\x1b[') && !stdout.text.includes('waiting for latency summaries'), 'no screen redraws');
  });

  it('on a terminal, redraws the table with the lag p99 filled in', async () => {
    const broker = await startEmbeddedBroker({ port: 0 });
    cleanups.push(() => broker.close());
    const stdout = sink(true);
    const w = watch({ url: broker.url, stdout, stderr: sink() });
    const pub = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    cleanups.push(() => pub.endAsync(true));
    await pub.publishAsync('nines/gw-a/plc/latency', summary('gw-a', 'plc', 0, { lagMs: 1.5 }), { qos: 1, retain: true });
    await until(() => /\nplc /.test(stdout.text), 'the table');
    await w.stop();
    const screen = stdout.text.split('\x1b[H\x1b[2J').pop();
    const lines = screen.split('\n');
    const head = lines.find((l) => l.startsWith('job'));
    const row = lines.find((l) => l.startsWith('plc'));
    const col = head.split(/ {2,}/).indexOf('lag p99');
    assert.equal(row.split(/ {2,}/)[col], '1.500', screen);
  });
});
