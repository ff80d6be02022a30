'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const tls = require('node:tls');
const { execFileSync } = require('node:child_process');
const mqtt = require('mqtt');
const { Publisher } = require('../../gateway/runtime/mqtt/publisher');
const { startEmbeddedBroker } = require('../../gateway/runtime/mqtt/broker');
const { freePort } = require('../helpers/mosquitto');
const { assertTools } = require('../helpers/system-tools');
const { until } = require('../helpers/wait');

function nextEvent (emitter, name) {
  return new Promise((resolve) => emitter.once(name, resolve));
}

async function subscriber (url) {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0 });
  const messages = [];
  client.on('message', (topic, payload, packet) => messages.push({ topic, json: JSON.parse(payload.toString()), qos: packet.qos }));
  await client.subscribeAsync('nines/#', { qos: 1 });
  return { messages, on: (t) => messages.filter((m) => m.topic === t), end: () => client.endAsync(true) };
}

/** An aedes broker with custom options (auth hooks) over plain TCP or TLS. */
async function customBroker (aedesOpts, tlsOpts) {
  const { Aedes } = await import('aedes');
  const aedes = await Aedes.createBroker(aedesOpts);
  const sockets = new Set();
  const onConn = (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); aedes.handle(s); };
  const server = tlsOpts ? tls.createServer(tlsOpts, onConn) : net.createServer(onConn);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  return {
    port,
    close: async () => {
      await new Promise((resolve) => aedes.close(resolve));
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  };
}

describe('gateway/runtime/mqtt/publisher: options, credentials, TLS, backoff, lifecycle', () => {
  let cleanups;
  beforeEach(() => { cleanups = []; });
  afterEach(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });
  const make = (opts) => {
    const p = new Publisher({ gatewayId: 'gw', reconnectInitialMs: 20, reconnectMaxMs: 100, ...opts });
    cleanups.push(() => p.stop());
    return p;
  };
  const broker = async (port = 0) => {
    const b = await startEmbeddedBroker({ port });
    cleanups.push(() => b.close());
    return b;
  };
  const sub = async (url) => {
    const s = await subscriber(url);
    cleanups.push(() => s.end());
    return s;
  };

  it('rejects bad options with NINES_ERR_INVALID_ARG naming the option', () => {
    const cases = [
      [{ url: 'http://h' }, 'url'],
      [{ url: 'mqtt://h?clientId=x' }, 'url'],
      [{ url: 'mqtt://h', gatewayId: 'a/b' }, 'gatewayId'],
      [{ url: 'mqtt://h', prefix: 'nines/#' }, 'prefix'],
      [{ url: 'mqtt://h', qos: 3 }, 'qos'],
      [{ url: 'mqtt://h', bufferMax: -1 }, 'bufferMax'],
      [{ url: 'mqtt://h', maxInflight: 0 }, 'maxInflight'],
      [{ url: 'mqtt://h', valuesMinIntervalMs: -5 }, 'valuesMinIntervalMs'],
      [{ url: 'mqtt://h', protocolVersion: 3 }, 'protocolVersion']
    ];
    for (const [opts, field] of cases) {
      assert.throws(() => new Publisher({ gatewayId: 'gw', ...opts }), (err) => {
        assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
        assert.equal(err.details.field, field);
        assert.ok(err.message.startsWith(`${field}: `), err.message);
        return true;
      });
    }
  });

  it('refuses job names that are not one topic level', () => {
    const p = new Publisher({ url: 'mqtt://127.0.0.1:1', gatewayId: 'gw' });
    for (const fn of [() => p.publishLatency('a/b', {}), () => p.publishValue('+', {}), () => p.publishError('#', 'x'), () => p.setJobs(['ok', 'no/t'])]) {
      assert.throws(fn, { code: 'NINES_ERR_INVALID_ARG' });
    }
  });

  it('passes username and password to the broker, and keeps retrying while they are refused', async () => {
    const seen = [];
    const b = await customBroker({
      authenticate: (client, username, password, done) => {
        seen.push([username, password && password.toString()]);
        done(null, username === 'gw' && password && password.toString() === 'right');
      }
    });
    cleanups.push(() => b.close());
    const wrong = make({ url: `mqtt://127.0.0.1:${b.port}`, username: 'gw', password: 'wrong', clientId: 'wrong' });
    const errors = [];
    wrong.on('error', (e) => errors.push(e));
    await wrong.start();
    await until(() => errors.length >= 2, 'two refused attempts');
    assert.equal(wrong.stats.connected, false);
    assert.ok(errors.every((e) => e.code === 'NINES_ERR_MQTT'));
    assert.doesNotMatch(JSON.stringify(errors.map((e) => e.toJSON())), /wrong"/);
    const right = make({ url: `mqtt://127.0.0.1:${b.port}`, username: 'gw', password: 'right' });
    await right.start();
    assert.equal(right.stats.connected, true);
    assert.deepEqual(seen.find((s) => s[1] === 'right'), ['gw', 'right']);
  });

  describe('TLS', () => {
    let dir;
    let certPem;
    let keyPem;
    before(() => {
      assertTools(['openssl']);
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-tls-'));
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
        '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', '1',
        '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
      certPem = fs.readFileSync(path.join(dir, 'cert.pem'));
      keyPem = fs.readFileSync(path.join(dir, 'key.pem'));
    });
    after(() => { if (dir) fs.rmSync(dir, { recursive: true, force: true }); });

    it('connects over mqtts:// with the CA passed through, and refuses an unknown certificate without it', async () => {
      const b = await customBroker({}, { key: keyPem, cert: certPem });
      cleanups.push(() => b.close());
      const url = `mqtts://127.0.0.1:${b.port}`;
      const ok = make({ url, tls: { ca: certPem, caPath: '/ignored/by/tls' } });
      await ok.start();
      assert.equal(ok.stats.connected, true);
      const untrusting = make({ url });
      const errors = [];
      untrusting.on('error', (e) => errors.push(e));
      await untrusting.start();
      assert.equal(untrusting.stats.connected, false);
      assert.equal(errors[0].code, 'NINES_ERR_MQTT');
      assert.match(errors[0].message, /self[- ]signed/i);
    });
  });

  it('reconnects with capped exponential backoff and jitter (MQTT.js\'s fixed period is off)', async () => {
    const port = await freePort();
    const delays = [];
    const p = make({ url: `mqtt://127.0.0.1:${port}`, reconnectInitialMs: 20, reconnectMaxMs: 80, random: () => 0.5 });
    p.on('reconnecting', ({ delayMs }) => delays.push(delayMs));
    await p.start();
    await until(() => delays.length >= 4, 'four failed attempts');
    // delay n = ceiling·(1 + random)/2 with ceiling = min(80, 20·2^n)
    assert.deepEqual(delays.slice(0, 4), [15, 30, 60, 60]);
  });

  it('reports failed attempts as error events only when someone listens, and never throws', async () => {
    const port = await freePort();
    const p = make({ url: `mqtt://127.0.0.1:${port}` });
    assert.equal(p.listenerCount('error'), 0);
    await p.start();
    await nextEvent(p, 'reconnecting');
    assert.match(p.stats.lastError, /ECONNREFUSED/);
  });

  it('stop() while the broker is down resolves and counts what could not be sent', async () => {
    const port = await freePort();
    const p = make({ url: `mqtt://127.0.0.1:${port}` });
    await p.start();
    p.publishLatency('job', { seq: 1 });
    p.publishLatency('job', { seq: 2 });
    p.publishValue('job', { v: 1 });
    await p.stop();
    assert.equal(p.stats.dropped, 2);
    assert.deepEqual(p.stats.droppedByJob, { job: 2 });
    assert.equal(p.stats.unsentAtStop, 3);
    assert.equal(p.stats.buffered, 0);
  });

  it('stop() before start() resolves, and publishing after stop counts as dropped', async () => {
    const p = new Publisher({ url: 'mqtt://127.0.0.1:1', gatewayId: 'gw' });
    await p.stop();
    await p.start();
    assert.equal(p.stats.connected, false);
    p.publishLatency('job', {});
    p.publishValue('job', {});
    p.publishError('job', new Error('x'));
    assert.equal(p.stats.dropped, 1);
    assert.equal(p.stats.unsentAtStop, 3);
  });

  it('stop() sends values still waiting in their window, then the offline status', async () => {
    const b = await broker();
    const p = make({ url: b.url, valuesMinIntervalMs: 60000 });
    await p.start();
    const s = await sub(b.url);
    p.publishValue('job', { v: 1 });
    p.publishValue('job', { v: 2 });
    await until(() => s.messages.length >= 2, 'the retained status and the first value');
    await p.stop();
    await until(() => s.messages.length >= 4, 'the second value and offline');
    assert.deepEqual(s.messages.map((m) => [m.topic, m.json.v ?? m.json.state]), [
      ['nines/gw/status', 'online'], ['nines/gw/job/value', 1], ['nines/gw/job/value', 2], ['nines/gw/status', 'offline']
    ]);
  });

  it('setJobs() republishes the status, and can set a job\'s value window', async () => {
    const b = await broker();
    const p = make({ url: b.url, valuesMinIntervalMs: 60000 });
    await p.start();
    const s = await sub(b.url);
    await until(() => s.on('nines/gw/status').length === 1, 'the first status');
    p.setJobs([{ name: 'fast', valuesMinIntervalMs: 0 }, 'slow']);
    for (let v = 1; v <= 5; v++) {
      p.publishValue('fast', { v });
      p.publishValue('slow', { v });
    }
    await until(() => s.on('nines/gw/fast/value').length === 5, 'five fast values');
    assert.deepEqual(s.on('nines/gw/status').map((m) => m.json.jobs), [[], ['fast', 'slow']]);
    assert.deepEqual(s.on('nines/gw/slow/value').map((m) => m.json.v), [1]);
  });

  it('publishes latency at QoS 0 when asked, the status still at QoS 1', async () => {
    const b = await broker();
    const p = make({ url: b.url, qos: 0 });
    await p.start();
    const s = await sub(b.url);
    p.publishLatency('job', { seq: 1 });
    await until(() => s.on('nines/gw/job/latency').length === 1, 'the latency message');
    assert.equal(s.on('nines/gw/job/latency')[0].qos, 0);
    assert.equal(s.on('nines/gw/status')[0].qos, 1);
  });

  it('while offline keeps every value that left its window, in order (issue 14 item 6), and one merged error digest per job, sent on connect', async () => {
    const port = await freePort();
    const p = make({ url: `mqtt://127.0.0.1:${port}`, reconnectInitialMs: 300, reconnectMaxMs: 300, random: () => 1, valuesMinIntervalMs: 0, errorsMinIntervalMs: 0 });
    await p.start();
    for (let v = 1; v <= 3; v++) p.publishValue('job', { v });
    for (let i = 0; i < 4; i++) p.publishError('job', new Error(`e${i}`));
    assert.equal(p.stats.valuesCoalesced, 0);
    assert.equal(p.stats.valuesBuffered, 3);
    assert.equal(p.stats.errorsSuppressed, 3);
    await nextEvent(p, 'reconnecting'); // the next attempt is 300 ms away
    const b = await broker(port);
    const s = await sub(b.url);
    await until(() => s.messages.length >= 5, 'status, three values and an error');
    assert.deepEqual(s.on('nines/gw/job/value').map((m) => m.json.v), [1, 2, 3]);
    const [err] = s.on('nines/gw/job/error').map((m) => m.json);
    assert.deepEqual([err.message, err.count, err.suppressed], ['e3', 4, 3]);
  });
});
