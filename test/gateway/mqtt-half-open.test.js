'use strict';

/**
 * A half-open broker: a real Mosquitto frozen with SIGSTOP (this test's own child, by pid). The
 * kernel still accepts and acknowledges TCP, so the gateway keeps writing into a connection that
 * nobody reads until its keepalive gives up (1.5 × keepalive), and new connection attempts hang
 * until their connect timeout. Issue 12, items 1 and 4.
 *
 * Every wait is on an event or a condition, bounded; nothing depends on how long a step took.
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const mqtt = require('mqtt');
const { Publisher } = require('../../gateway/runtime/mqtt/publisher');
const { Gateway } = require('../../gateway/runtime/gateway');
const { validateConfig } = require('../../gateway/runtime/config');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { findMosquitto, freePort } = require('../helpers/mosquitto');
const { until } = require('../helpers/wait');

const { NINES_BIN } = require('../helpers/nines-cli');

/**
 * Starts a Mosquitto child whose pid this test owns, so it can be frozen (SIGSTOP) and thawed
 * (SIGCONT). Same settings as test/helpers/mosquitto.js: loopback, anonymous, no persistence.
 */
async function startFreezableMosquitto () {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-mosquitto-frozen-'));
  const conf = path.join(dir, 'mosquitto.conf');
  const lines = [`listener ${port} 127.0.0.1`, 'allow_anonymous true', 'persistence false', 'log_dest stderr', 'log_type error'];
  if (process.getuid && process.getuid() === 0) lines.push('user root');
  fs.writeFileSync(conf, lines.join('\n') + '\n');
  const child = spawn(findMosquitto(), ['-c', conf], { stdio: ['ignore', 'ignore', 'ignore'] });
  let exited = false;
  const exit = new Promise((resolve) => {
    child.once('exit', () => { exited = true; resolve(); });
    child.once('error', () => { exited = true; resolve(); });
  });
  let frozen = false;
  const b = {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    freeze: () => { process.kill(child.pid, 'SIGSTOP'); frozen = true; },
    thaw: () => { if (frozen && !exited) process.kill(child.pid, 'SIGCONT'); frozen = false; },
    stop: async () => {
      b.thaw();
      if (!exited) child.kill('SIGTERM');
      const t = setTimeout(() => { if (!exited) child.kill('SIGKILL'); }, 5000);
      await exit;
      clearTimeout(t);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
  // ready once an MQTT client gets its CONNACK
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      const c = await mqtt.connectAsync(b.url, { reconnectPeriod: 0, connectTimeout: 1000 });
      await c.endAsync(true);
      return b;
    } catch (err) {
      if (exited || Date.now() > deadline) { await b.stop(); throw new Error(`mosquitto did not start on port ${port}: ${err.message}`, { cause: err }); }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** A plain subscriber; its keepalive (60 s) outlasts the freezes here, so it stays connected. */
async function subscriber (url, topic) {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0, keepalive: 60 });
  const messages = [];
  client.on('message', (t, payload, packet) => messages.push({ topic: t, json: JSON.parse(payload.toString()), retain: packet.retain }));
  await client.subscribeAsync(topic, { qos: 1 });
  return { messages, on: (t) => messages.filter((m) => m.topic === t), end: () => client.endAsync(true) };
}

/** The seqs in first-delivery order (QoS 1 is at-least-once: a seq may come twice, after a requeue). */
function firstSeen (msgs) {
  const seen = new Set();
  const out = [];
  for (const m of msgs) if (!seen.has(m.json.seq)) { seen.add(m.json.seq); out.push(m.json.seq); }
  return out;
}

/** The next `name` event; unlike events.once(), an 'error' event (a failed attempt) does not reject it. */
const nextEvent = (emitter, name) => new Promise((resolve) => emitter.once(name, resolve));

const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('MQTT with a half-open (frozen) broker', function () {
  this.timeout(60000);
  let broker;
  let cleanups;
  beforeEach(async () => {
    cleanups = [];
    broker = await startFreezableMosquitto();
  });
  afterEach(async () => {
    if (broker) broker.thaw();
    for (const fn of cleanups.reverse()) await fn().catch(() => {});
    if (broker) await broker.stop();
    broker = null;
  });

  it('publisher: summaries in flight when the keepalive gives up go back to the buffer, in order, none counted as dropped', async () => {
    const p = new Publisher({ url: broker.url, gatewayId: 'gw', keepaliveMs: 1000, connectTimeoutMs: 1000, reconnectInitialMs: 50, reconnectMaxMs: 200 });
    cleanups.push(() => p.stop());
    const failures = [];
    p.on('error', (err) => failures.push(err.message));
    await p.start();
    await until(() => p.stats.published >= 1, 'the online status', 15000);
    const s = await subscriber(broker.url, 'nines/gw/job-a/latency');
    cleanups.push(() => s.end());

    broker.freeze();
    // connected as far as MQTT.js knows: these go into the socket and are never acknowledged
    for (let seq = 1; seq <= 10; seq++) p.publishLatency('job-a', { seq });
    assert.equal(p.stats.inflight, 10);
    await nextEvent(p, 'offline'); // keepalive timeout: MQTT.js fails all ten with "Connection closed"
    assert.equal(p.stats.dropped, 0, `dropped after the keepalive timeout; errors: ${failures.join(' | ')}`);
    assert.equal(p.stats.buffered, 10);
    for (let seq = 11; seq <= 15; seq++) p.publishLatency('job-a', { seq });
    // an attempt against the frozen broker times out, and the buffer holds
    let attempts = 0;
    p.on('reconnecting', () => attempts++);
    await until(() => attempts >= 1, 'a failed attempt on the frozen broker', 15000);
    assert.equal(p.stats.buffered, 15);
    assert.equal(p.stats.dropped, 0);

    broker.thaw();
    await until(() => firstSeen(s.on('nines/gw/job-a/latency')).length >= 15, 'seq 1-15 after the thaw', 15000);
    assert.deepEqual(firstSeen(s.on('nines/gw/job-a/latency')), range(1, 15));
    await until(() => p.stats.buffered === 0 && p.stats.inflight === 0, 'acks', 15000);
    assert.equal(p.stats.dropped, 0);
    assert.ok(!failures.some((f) => /publish .* failed/.test(f)), `no publish reported as failed: ${failures.join(' | ')}`);
  });

  it('gateway (issue 12 item 1): 2 jobs at 100/s, keepalive 1 s, broker frozen: seq contiguous for both jobs, dropped 0', async () => {
    const ascii = await createAsciiSimulator({ port: 0 });
    const modbus = await createModbusTcpSimulator({ port: 0 });
    cleanups.push(() => ascii.close(), () => modbus.close());
    const config = validateConfig({
      gateway: { id: 'gw-frozen', interval: '500ms', workers: 1 },
      mqtt: { url: broker.url, prefix: 'nines', keepalive: '1s', connectTimeout: '1s', reconnect: { initial: '100ms', max: '500ms' } },
      devices: { ed588: { target: ascii.url, timeout: '200ms' }, plc: { target: modbus.url, timeout: '200ms' } },
      jobs: [
        { name: 'inputs', device: 'ed588', command: '@01', rate: '100/s' },
        { name: 'hr', device: 'plc', read: { fc: 3, address: 0, quantity: 10 }, rate: '100/s' }
      ]
    });
    const s = await subscriber(broker.url, 'nines/gw-frozen/#');
    cleanups.push(() => s.end());
    const gw = new Gateway(config);
    cleanups.push(() => gw.stop());
    const produced = { inputs: -1, hr: -1 };
    gw.on('summary', (job, payload) => { produced[job] = payload.seq; });
    gw.on('job-error', () => {});
    await gw.start();
    const latency = (job) => s.on(`nines/gw-frozen/${job}/latency`);
    await until(() => latency('inputs').length >= 2 && latency('hr').length >= 2, 'summaries before the freeze', 15000);

    let offline = false;
    gw.publisher.once('offline', () => { offline = true; });
    broker.freeze();
    const frozenAt = { ...produced };
    // summaries handed over after the freeze sit unacknowledged in the frozen connection until the
    // keepalive gives up (1.5 s), then go back to the buffer
    await until(() => offline && produced.inputs > frozenAt.inputs && produced.hr > frozenAt.hr, 'the keepalive timeout, and summaries during the freeze', 15000);
    let attempts = 0;
    gw.publisher.on('reconnecting', () => attempts++);
    await until(() => attempts >= 1, 'a failed attempt on the frozen broker', 15000);
    assert.equal(gw.publisher.stats.dropped, 0);

    broker.thaw();
    const upTo = { ...produced };
    await until(() => ['inputs', 'hr'].every((j) => firstSeen(latency(j)).includes(upTo[j])), 'every summary up to the thaw', 20000);
    for (const job of ['inputs', 'hr']) {
      const seqs = firstSeen(latency(job));
      assert.deepEqual(seqs.slice(0, upTo[job] + 1), range(0, upTo[job]), `${job}: seq contiguous`);
    }
    assert.equal(gw.publisher.stats.dropped, 0);
    const online = s.on('nines/gw-frozen/status').filter((m) => m.json.state === 'online');
    assert.ok(online.length >= 2, 'online again after the freeze');
    assert.deepEqual(online[online.length - 1].json.dropped, { total: 0, jobs: {} });
  });

  it('nines run: SIGTERM with the broker frozen exits 0 within the stop timeout (2 s) + 3 s', async () => {
    const ascii = await createAsciiSimulator({ port: 0 });
    cleanups.push(() => ascii.close());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-sigterm-'));
    cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'gateway.json');
    // the default keepalive (30 s): MQTT.js would not notice the frozen broker for 45 s
    fs.writeFileSync(file, JSON.stringify({
      gateway: { id: 'gw-term', interval: '300ms', workers: 1 },
      mqtt: { url: broker.url, prefix: 'nines' },
      devices: { ed588: { target: ascii.url, timeout: '200ms' } },
      jobs: [{ name: 'inputs', device: 'ed588', command: '@01', rate: '100/s' }]
    }));
    const s = await subscriber(broker.url, 'nines/gw-term/#');
    cleanups.push(() => s.end());
    const child = spawn(process.execPath, [NINES_BIN, 'run', '--quiet', file], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })));
    cleanups.push(async () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); await exited; });
    await until(() => s.on('nines/gw-term/inputs/latency').length >= 2, `the gateway's summaries (stderr: ${stderr})`, 15000);

    // from here every publish (the last summaries, the `stopped` status) waits for an ack that
    // cannot come, and MQTT.js's keepalive would not notice for 45 s
    broker.freeze();
    const termAt = Date.now();
    child.kill('SIGTERM');
    const r = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve(null), 20000))]);
    assert.ok(r, `still running 20 s after SIGTERM (stderr: ${stderr})`);
    const tookMs = r.at - termAt;
    assert.equal(r.code, 0, `exit code (stderr: ${stderr})`);
    assert.ok(tookMs <= 2000 + 3000, `exited ${tookMs} ms after SIGTERM`);

    // What subscribers get: the final `stopped` status went into the frozen socket, but without an
    // acknowledgement there was no clean DISCONNECT, so the broker, once thawed, sends the will
    broker.thaw();
    await until(() => s.on('nines/gw-term/status').some((m) => m.json.reason === 'connection lost'), 'the will after the thaw', 15000);
    const late = await subscriber(broker.url, 'nines/gw-term/status');
    cleanups.push(() => late.end());
    await until(() => late.messages.length >= 1, 'the retained status', 15000);
    assert.equal(late.messages[0].retain, true);
    assert.deepEqual([late.messages[0].json.state, late.messages[0].json.reason], ['offline', 'connection lost']);
  });
});
