'use strict';

const assert = require('node:assert/strict');
const net = require('node:net');
const path = require('node:path');
const { once } = require('node:events');
const { spawn } = require('node:child_process');
const mqtt = require('mqtt');
const { Publisher } = require('../../gateway/runtime/mqtt/publisher');
const { startEmbeddedBroker } = require('../../gateway/runtime/mqtt/broker');
const { startMosquitto, freePort } = require('../helpers/mosquitto');
const { until } = require('../helpers/wait');

/**
 * The publisher against two real brokers: the embedded aedes and a Mosquitto process. The same
 * behaviours run against both (as MQTT.js runs one client suite per transport).
 *
 * Order, not timing: a subscriber attaches only after the broker has acknowledged the retained
 * status it is meant to find (otherwise the status can arrive live, unretained, or twice: once live
 * and once from the retained store, which MQTT allows), and a broker restart is hidden behind a
 * gate until the subscriber is back. So the tests hold on a loaded machine too.
 */

const BROKERS = {
  aedes: async (port = 0) => {
    const b = await startEmbeddedBroker({ port });
    return { url: b.url, port: b.port, down: () => b.close(), stop: () => b.close() };
  },
  mosquitto: async (port) => {
    const m = await startMosquitto({ port });
    return { url: m.url, port: m.port, down: () => m.kill(), stop: () => m.stop() };
  }
};

/**
 * The next `name` event. Unlike events.once(), an 'error' event does not reject it: the publisher
 * reports each failed attempt as 'error' while it keeps trying, and these tests wait through them.
 */
function nextEvent (emitter, name) {
  return new Promise((resolve) => emitter.once(name, resolve));
}

/** A plain mqtt.js subscriber that records every message as {topic, json, qos, retain}. */
async function subscriber (url, topic = 'nines/#') {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0 });
  const messages = [];
  client.on('message', (t, payload, packet) => {
    messages.push({ topic: t, json: JSON.parse(payload.toString()), qos: packet.qos, retain: packet.retain });
  });
  await client.subscribeAsync(topic, { qos: 1 });
  return {
    messages,
    on: (t) => messages.filter((m) => m.topic === t),
    until: (cond, what) => until(() => cond(messages), `${what} (got: ${messages.map((m) => m.topic).join(', ') || 'nothing'})`),
    end: () => client.endAsync(true)
  };
}

/**
 * A TCP proxy in front of the broker whose connections can be cut, as a network failure would, and
 * which can refuse new ones (close them at once) until it is opened again.
 */
async function cuttableProxy (port) {
  const sockets = new Set();
  let refusing = false;
  const server = net.createServer((down) => {
    if (refusing) { down.on('error', () => {}); down.destroy(); return; }
    const up = net.connect(port, '127.0.0.1');
    for (const s of [down, up]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => { sockets.delete(s); down.destroy(); up.destroy(); });
    }
    down.pipe(up);
    up.pipe(down);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `mqtt://127.0.0.1:${server.address().port}`,
    cut: () => { for (const s of sockets) s.resetAndDestroy(); },
    refuse: () => { refusing = true; },
    accept: () => { refusing = false; },
    close: () => new Promise((resolve) => { for (const s of sockets) s.destroy(); server.close(resolve); })
  };
}

const STATUS = 'nines/gw/status';
const LATENCY = 'nines/gw/job-a/latency';

/** Starts a publisher and waits until the broker has acknowledged its retained online status. */
async function startOnline (p) {
  await p.start();
  await until(() => p.stats.published >= 1, 'the broker to acknowledge the online status');
}

for (const [name, startBroker] of Object.entries(BROKERS)) {
  describe(`gateway/mqtt/publisher against ${name}`, function () {
    let broker;
    let cleanups;
    /** Creates a publisher that afterEach stops */
    const publisher = (opts = {}) => {
      const p = new Publisher({ url: broker.url, gatewayId: 'gw', version: '9.9.9', reconnectInitialMs: 20, reconnectMaxMs: 100, ...opts });
      cleanups.push(() => p.stop());
      return p;
    };
    const sub = async (url = broker.url) => {
      const s = await subscriber(url);
      cleanups.push(() => s.end());
      return s;
    };

    beforeEach(async () => {
      cleanups = [];
      broker = await startBroker();
    });
    afterEach(async () => {
      for (const fn of cleanups.reverse()) await fn();
      if (broker) await broker.stop();
    });

    it('a subscriber sees the retained online status with version, start time and jobs', async () => {
      const p = publisher();
      p.setJobs(['job-a', { name: 'job-b', valuesMinIntervalMs: 50 }]);
      await startOnline(p);
      assert.equal(p.stats.connected, true);
      const s = await sub();
      await s.until((m) => m.length >= 1, 'the status');
      const [status] = s.on(STATUS);
      assert.equal(status.retain, true);
      assert.equal(status.qos, 1);
      assert.equal(status.json.state, 'online');
      assert.equal(status.json.version, '9.9.9');
      assert.deepEqual(status.json.jobs, ['job-a', 'job-b']);
      assert.ok(!Number.isNaN(Date.parse(status.json.started)));
      assert.deepEqual(status.json.dropped, { total: 0, jobs: {} });
    });

    it('latency messages arrive in order with QoS 1', async () => {
      const p = publisher({ maxInflight: 8 });
      await p.start();
      const s = await sub();
      for (let seq = 0; seq < 200; seq++) p.publishLatency('job-a', { v: 1, job: 'job-a', seq });
      // never more than maxInflight handed to mqtt.js; the rest wait in our own queue
      assert.equal(p.stats.inflight, 8);
      assert.equal(p.stats.buffered, 192);
      await s.until((m) => s.on(LATENCY).length === 200, '200 latency messages');
      const got = s.on(LATENCY);
      assert.deepEqual(got.map((m) => m.json.seq), Array.from({ length: 200 }, (_, i) => i));
      assert.ok(got.every((m) => m.qos === 1 && m.retain === false));
      await until(() => p.stats.published >= 201, 'acks');
      assert.equal(p.stats.dropped, 0);
    });

    it('values are rate-limited: 1,000 in a tight loop give a few messages, the last one delivered', async () => {
      const p = publisher({ valuesMinIntervalMs: 100 });
      await p.start();
      const s = await sub();
      for (let i = 0; i < 1000; i++) p.publishValue('job-a', { values: [i] });
      await s.until(() => s.on('nines/gw/job-a/value').some((m) => m.json.values[0] === 999), 'the last value');
      const values = s.on('nines/gw/job-a/value').map((m) => m.json.values[0]);
      assert.ok(values.length <= 3, `got ${values.length} value messages: ${values}`);
      assert.equal(values[0], 0);
      assert.equal(values[values.length - 1], 999);
      assert.equal(p.stats.valuesCoalesced, 1000 - values.length);
    });

    it('errors are rate-limited and the next message counts the suppressed ones by code', async () => {
      const p = publisher({ errorsMinIntervalMs: 100 });
      await p.start();
      const s = await sub();
      for (let i = 0; i < 50; i++) {
        const err = Object.assign(new Error(`no reply to @01 (#${i})`), { code: i % 5 ? 'NINES_ERR_REPLY_TIMEOUT' : 'NINES_ERR_BAD_CHECKSUM' });
        p.publishError('job-a', err);
      }
      const topic = 'nines/gw/job-a/error';
      await s.until(() => s.on(topic).reduce((n, m) => n + m.json.count, 0) === 50, 'all 50 errors counted');
      const msgs = s.on(topic).map((m) => m.json);
      assert.equal(msgs.length, 2);
      assert.deepEqual([msgs[0].count, msgs[0].suppressed, msgs[0].code], [1, 0, 'NINES_ERR_BAD_CHECKSUM']);
      assert.deepEqual([msgs[1].count, msgs[1].suppressed], [49, 48]);
      assert.deepEqual(msgs[1].codes, { NINES_ERR_REPLY_TIMEOUT: 40, NINES_ERR_BAD_CHECKSUM: 9 });
      assert.equal(msgs[1].message, 'no reply to @01 (#49)');
      assert.equal(msgs[1].job, 'job-a');
      assert.equal(p.stats.errorsSuppressed, 48);
    });

    it('stop() publishes the retained offline status and disconnects cleanly, so no last will follows', async () => {
      const p = publisher();
      await startOnline(p);
      const s = await sub();
      await s.until(() => s.on(STATUS).length === 1, 'online');
      p.publishLatency('job-a', { seq: 1 });
      await p.stop();
      await s.until(() => s.on(STATUS).length === 2, 'offline');
      const latest = await subscriber(broker.url);
      cleanups.push(() => latest.end());
      await latest.until(() => latest.on(STATUS).length === 1, 'the retained status');
      const [retained] = latest.on(STATUS);
      assert.equal(retained.retain, true);
      assert.equal(retained.json.state, 'offline');
      assert.equal(retained.json.reason, 'stopped');
      // the latency message went out before the offline status
      assert.deepEqual(s.messages.map((m) => m.topic), [STATUS, LATENCY, STATUS]);
      assert.equal(p.stats.connected, false);
    });

    it('the broker publishes the last will (offline, retained) when the publisher process is killed', async () => {
      const code = `
        const { Publisher } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'gateway', 'runtime', 'mqtt', 'publisher.js'))});
        const p = new Publisher({ url: process.env.BROKER_URL, gatewayId: 'gw', version: 'child' });
        // say so once the broker has acknowledged the retained online status, not at CONNACK
        p.start().then(() => {
          const t = setInterval(() => { if (p.stats.published >= 1) { clearInterval(t); process.stdout.write('online\\n'); } }, 5);
        });
      `;
      const child = spawn(process.execPath, ['-e', code], { env: { ...process.env, BROKER_URL: broker.url }, stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = once(child, 'exit');
      cleanups.push(async () => { child.kill('SIGKILL'); await exited; });
      let out = '';
      child.stdout.on('data', (d) => { out += d; });
      await until(() => out.includes('online'), 'the child to be online');
      const s = await sub();
      await s.until(() => s.on(STATUS).some((m) => m.json.state === 'online'), 'the retained online');
      assert.deepEqual(s.on(STATUS).map((m) => [m.json.state, m.retain]), [['online', true]]);
      child.kill('SIGKILL');
      await exited;
      await s.until(() => s.on(STATUS).some((m) => m.json.state === 'offline'), 'the last will');
      assert.equal(s.on(STATUS).length, 2, 'online, then the will');
      const will = s.on(STATUS)[1].json;
      assert.equal(will.state, 'offline');
      assert.equal(will.reason, 'connection lost');
      assert.equal(will.version, 'child');
      const latest = await subscriber(broker.url);
      cleanups.push(() => latest.end());
      await latest.until(() => latest.on(STATUS).length === 1, 'the retained will');
      assert.equal(latest.on(STATUS)[0].json.state, 'offline');
    });

    it('after a cut connection the will says offline, then the publisher reconnects and says online again', async () => {
      const proxy = await cuttableProxy(broker.port);
      cleanups.push(() => proxy.close());
      const p = publisher({ url: proxy.url });
      const events = [];
      for (const e of ['connect', 'offline']) p.on(e, () => events.push(e));
      await startOnline(p);
      const s = await sub();
      await s.until(() => s.on(STATUS).length === 1, 'online');
      proxy.cut();
      await s.until(() => s.on(STATUS).length === 3, 'offline, then online again');
      const [, will, again] = s.on(STATUS).map((m) => m.json);
      assert.deepEqual([will.state, will.reason], ['offline', 'connection lost']);
      assert.deepEqual([again.state, again.reconnects], ['online', 1]);
      assert.deepEqual(events, ['connect', 'offline', 'connect']);
      assert.equal(p.stats.reconnects, 1);
    });

    it('buffers latency (bounded, drops counted) while the broker is down, then delivers it in order with the dropped counts', async () => {
      const port = broker.port;
      // The publisher goes through a gate that refuses it while the broker restarts, so the second
      // subscriber is attached before the buffered summaries can go out, however slow the restart
      const gate = await cuttableProxy(port);
      cleanups.push(() => gate.close());
      const p = publisher({ url: gate.url, bufferMax: 5 });
      p.setJobs(['job-a']);
      await startOnline(p);
      const s1 = await sub();
      for (let seq = 1; seq <= 3; seq++) p.publishLatency('job-a', { seq });
      await s1.until(() => s1.on(LATENCY).length === 3, 'seq 1-3');
      await until(() => p.stats.inflight === 0, 'acks');

      const offline = nextEvent(p, 'offline');
      gate.refuse();
      await broker.down();
      broker = null;
      await offline;
      assert.equal(p.stats.connected, false);
      for (let seq = 4; seq <= 11; seq++) p.publishLatency('job-a', { seq });
      assert.equal(p.stats.buffered, 5);
      assert.equal(p.stats.dropped, 3);
      assert.deepEqual(p.stats.droppedByJob, { 'job-a': 3 });

      await nextEvent(p, 'reconnecting'); // it keeps trying, refused by the gate
      broker = await startBroker(port);
      const s2 = await sub();
      gate.accept();
      await s2.until(() => s2.on(LATENCY).length === 5, 'the buffered seq 7-11');
      assert.deepEqual(s2.on(LATENCY).map((m) => m.json.seq), [7, 8, 9, 10, 11]);
      const status = s2.on(STATUS)[0].json;
      assert.equal(status.state, 'online');
      assert.deepEqual(status.dropped, { total: 3, jobs: { 'job-a': 3 } });
      assert.equal(status.reconnects, 1);
      // the status goes before the buffered summaries
      assert.equal(s2.messages[0].topic, STATUS);
      assert.equal(p.stats.buffered, 0);
    });

    it('the last will is rebuilt per connection: after a broker restart it carries the current reconnect count and drops', async () => {
      const port = broker.port;
      const gate = await cuttableProxy(port);
      cleanups.push(() => gate.close());
      const p = publisher({ url: gate.url, bufferMax: 2 });
      p.setJobs(['job-a']);
      await startOnline(p);

      const offline = nextEvent(p, 'offline');
      gate.refuse();
      await broker.down();
      broker = null;
      await offline;
      for (let seq = 1; seq <= 5; seq++) p.publishLatency('job-a', { seq }); // 3 dropped
      await nextEvent(p, 'reconnecting');
      broker = await startBroker(port);
      const s = await sub();
      const connected = nextEvent(p, 'connect');
      gate.accept();
      await connected;
      await s.until(() => s.on(LATENCY).length === 2, 'the buffered seq 4-5');
      await until(() => p.stats.inflight === 0, 'acks');
      assert.equal(p.stats.reconnects, 1);

      // the connection dies without a DISCONNECT: the broker sends the will it holds
      gate.cut();
      await s.until(() => s.on(STATUS).some((m) => m.json.state === 'offline'), 'the will');
      const will = s.on(STATUS).find((m) => m.json.state === 'offline').json;
      assert.equal(will.reason, 'connection lost');
      assert.equal(will.reconnects, 1);
      assert.deepEqual(will.dropped, { total: 3, jobs: { 'job-a': 3 } });
    });

    it('start() resolves while the broker is down, keeps trying, and connects when it comes up', async () => {
      const port = await freePort();
      const p = publisher({ url: `mqtt://127.0.0.1:${port}` });
      const errors = [];
      p.on('error', (err) => errors.push(err));
      await p.start();
      assert.equal(p.stats.connected, false);
      p.publishLatency('job-a', { seq: 1 });
      assert.equal(p.stats.buffered, 1);
      const connected = nextEvent(p, 'connect');
      const late = await startBroker(port);
      cleanups.push(() => late.stop());
      await connected;
      await until(() => p.stats.buffered === 0 && p.stats.inflight === 0, 'the buffered message to go');
      assert.ok(errors.length >= 1);
      assert.ok(errors.every((e) => e.code === 'NINES_ERR_MQTT'));
      assert.equal(errors[0].details.cause, 'ECONNREFUSED');
    });
  });
}
