'use strict';

/**
 * The gateway with its embedded broker against hostile clients: a real Gateway (worker thread,
 * ASCII simulator), aedes on 127.0.0.1 port 0, and plain mqtt.js clients. Nothing listens or
 * connects beyond 127.0.0.1.
 */

const assert = require('node:assert/strict');
const mqtt = require('mqtt');
const { Gateway } = require('../../gateway/runtime/gateway');
const { validateConfig } = require('../../gateway/runtime/config');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const { until } = require('../helpers/wait');

const PREFIX = 'nines-sec';
const ID = 'gw-sec';
const STATUS = `${PREFIX}/${ID}/status`;
const LATENCY = `${PREFIX}/${ID}/inputs/latency`;

describe('gateway with the embedded broker: nothing forged, nobody kicked off', function () {
  this.timeout(40000);
  let sim, gw, cleanups;

  beforeEach(async () => {
    cleanups = [];
    sim = await createAsciiSimulator({ port: 0 });
  });
  afterEach(async () => {
    for (const fn of cleanups.reverse()) await fn();
    if (gw) await gw.stop().catch(() => {});
    if (sim) await sim.close();
    gw = sim = null;
  });

  const startGateway = async (embedded = {}) => {
    gw = new Gateway(validateConfig({
      gateway: { id: ID, interval: '200ms', workers: 1 },
      mqtt: { prefix: PREFIX, embedded: { host: '127.0.0.1', port: 0, ...embedded } },
      devices: { ed588: { target: sim.url, timeout: '200ms' } },
      jobs: [{ name: 'inputs', device: 'ed588', command: '@01', rate: '100/s' }]
    }, { env: {} }));
    const events = { broker: [], refused: [] };
    gw.on('broker', (b) => events.broker.push(b));
    gw.on('broker-refused', (r) => events.refused.push(r));
    await gw.start();
    return events;
  };
  const attempt = (opts = {}) => new Promise((resolve) => {
    const client = mqtt.connect(gw.broker.url, { reconnectPeriod: 0, connectTimeout: 5000, ...opts });
    cleanups.push(() => client.endAsync(true));
    client.once('connect', () => resolve({ client, connected: true, code: 0 }));
    client.once('error', (err) => resolve({ client, connected: false, code: err.code }));
  });
  /** A subscriber on '#' collecting status and latency bodies. */
  const reader = async (opts) => {
    const { client, connected } = await attempt(opts);
    assert.equal(connected, true);
    const got = { status: [], latency: [], all: [] };
    client.on('message', (topic, payload, packet) => {
      got.all.push(topic);
      const body = JSON.parse(payload.toString());
      if (topic === STATUS) got.status.push({ body, retain: packet.retain });
      if (topic === LATENCY) got.latency.push(body);
    });
    await client.subscribeAsync('#', { qos: 1 });
    return got;
  };

  it('a client with the gateway\'s id is refused, the gateway stays connected and keeps publishing; forged status and summaries go nowhere', async () => {
    const events = await startGateway();
    assert.equal(events.broker.length, 1);
    assert.deepEqual({ ...events.broker[0], url: undefined }, { url: undefined, embedded: true, host: '127.0.0.1', loopback: true, login: null, passwordSource: null, prefix: PREFIX });
    const sub = await reader({ clientId: 'dashboard' });
    await until(() => sub.latency.length >= 2 && gw.publisher.stats.connected, 'the first summaries', 15000);
    const reconnects = gw.publisher.stats.reconnects;

    // 1. take over the gateway's client id
    const thief = await attempt({ clientId: `nines-${ID}` });
    assert.equal(thief.connected, false);
    assert.equal(thief.code, 2, 'identifier rejected');

    // 2. forge a retained status and a summary under the prefix
    const forger = await attempt({ clientId: 'forger' });
    assert.equal(forger.connected, true);
    const closed = new Promise((resolve) => forger.client.once('close', resolve));
    forger.client.publish(STATUS, JSON.stringify({ state: 'offline', forged: true }), { qos: 1, retain: true });
    forger.client.publish(LATENCY, JSON.stringify({ v: 1, seq: 999999, forged: true }), { qos: 1 });
    await closed;

    // the gateway was never kicked off and goes on publishing, seq contiguous
    const seen = sub.latency.length;
    await until(() => sub.latency.length >= seen + 3, 'summaries after the attacks', 15000);
    assert.equal(gw.publisher.stats.connected, true);
    assert.equal(gw.publisher.stats.reconnects, reconnects, 'no reconnect: the gateway was not disconnected');
    assert.ok(sub.latency.every((m, i) => m.seq === sub.latency[0].seq + i && !m.forged), `seq ${sub.latency.map((m) => m.seq)}`);
    assert.ok(sub.status.every((s) => s.body.state === 'online' && !s.body.forged));

    // a late subscriber finds the gateway's own retained status
    const late = await reader({ clientId: 'late' });
    await until(() => late.status.length >= 1, 'the retained status', 15000);
    assert.equal(late.status[0].retain, true);
    assert.equal(late.status[0].body.state, 'online');
    assert.equal(late.status[0].body.forged, undefined);

    assert.deepEqual(events.refused.map((r) => r.reason), ['reserved-client-id', 'publish-under-prefix']);
    assert.deepEqual(gw.broker.refused(), { 'bad-login': 0, 'reserved-client-id': 1, 'client-id-in-use': 0, 'publish-under-prefix': 1, 'packet-too-large': 0, 'too-many-clients': 0 });
  });

  it('with a login every client must present it, subscribers then read everything, and the gateway publishes with its own credential', async () => {
    const events = await startGateway({ username: 'reader', password: 'reader-pw' });
    assert.equal(events.broker[0].login, 'reader');
    assert.equal(events.broker[0].passwordSource, 'file');
    assert.equal((await attempt({ clientId: 'anon' })).code, 4);
    assert.equal((await attempt({ clientId: 'guess', username: 'reader', password: 'nope' })).code, 4);
    const sub = await reader({ clientId: 'dashboard', username: 'reader', password: 'reader-pw' });
    await until(() => sub.latency.length >= 2 && sub.status.length >= 1, 'status and summaries', 15000);
    assert.equal(sub.status[0].body.state, 'online');
    assert.ok(sub.all.includes(STATUS) && sub.all.includes(LATENCY));
    // a logged-in reader still cannot publish under the prefix
    const { client } = await attempt({ clientId: 'reader-2', username: 'reader', password: 'reader-pw' });
    const closed = new Promise((resolve) => client.once('close', resolve));
    client.publish(STATUS, '{"state":"offline"}', { qos: 1, retain: true });
    await closed;
    assert.equal(gw.broker.refused()['publish-under-prefix'], 1);
    assert.equal(gw.broker.refused()['bad-login'], 2);
  });
});
