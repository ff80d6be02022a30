'use strict';

/**
 * Who may do what on the embedded broker: a real aedes on 127.0.0.1 port 0 and plain mqtt.js
 * clients. The host rule is tested on the guard alone, so nothing ever listens beyond loopback.
 */

const assert = require('node:assert/strict');
const mqtt = require('mqtt');
const { startEmbeddedBroker, localUrl } = require('../../gateway/runtime/mqtt/broker');
const { createBrokerGuard } = require('../../gateway/runtime/mqtt/broker-guard');
const { until } = require('../helpers/wait');

const GATEWAY = { clientId: 'nines-gw', prefix: 'nines' };
const STATUS = 'nines/gw/status';
const LATENCY = 'nines/gw/job-a/latency';

describe('gateway/runtime/mqtt/broker-guard: who may do what on the embedded broker', () => {
  let cleanups;
  beforeEach(() => { cleanups = []; });
  afterEach(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });

  const broker = async (opts) => {
    const b = await startEmbeddedBroker({ port: 0, ...opts });
    cleanups.push(() => b.close());
    return b;
  };
  /** Connects once (no reconnect); resolves with the client and the CONNACK outcome. */
  const attempt = (url, opts = {}) => new Promise((resolve) => {
    const client = mqtt.connect(url, { reconnectPeriod: 0, connectTimeout: 5000, ...opts });
    cleanups.push(() => client.endAsync(true));
    client.once('connect', () => resolve({ client, connected: true, code: 0 }));
    client.once('error', (err) => resolve({ client, connected: false, code: err.code, message: err.message }));
  });
  const connect = async (url, opts) => {
    const r = await attempt(url, opts);
    assert.equal(r.connected, true, `connect ${JSON.stringify(opts && opts.clientId)}: ${r.message}`);
    return r.client;
  };
  /** A subscriber on '#' recording [topic, payload, retain]. */
  const reader = async (url, opts) => {
    const client = await connect(url, opts);
    const got = [];
    client.on('message', (topic, payload, packet) => got.push([topic, payload.toString(), packet.retain]));
    await client.subscribeAsync('#', { qos: 1 });
    return { client, got, on: (t) => got.filter((m) => m[0] === t) };
  };
  /** The gateway's own client, logging in with the broker's credential. */
  const gatewayClient = (b, opts) => connect(b.url, { clientId: GATEWAY.clientId, ...b.gatewayAuth, ...opts });

  describe('the host rule (checked before anything listens)', () => {
    it('refuses a host beyond loopback without a login, naming the host and what to pass', () => {
      for (const host of ['0.0.0.0', '::', '10.0.0.7', 'edge-pc.example']) {
        assert.throws(() => createBrokerGuard({ host }), (err) => {
          assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
          assert.equal(err.details.field, 'host');
          const what = host.includes('.example') ? 'is a name, so it may bind beyond loopback (only 127.0.0.0/8, ::1 and localhost count as loopback)' : 'binds beyond loopback';
          assert.equal(err.message, `host: ${JSON.stringify(host)} ${what}: pass username and password so that clients must log in, or listen on 127.0.0.1`);
          return true;
        });
      }
    });

    it('accepts a host beyond loopback with a login, and loopback without one', () => {
      assert.equal(createBrokerGuard({ host: '0.0.0.0', username: 'reader', password: 'pw' }).login, 'reader');
      for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1']) assert.equal(createBrokerGuard({ host }).login, null);
    });

    it('refuses half a login and the gateway\'s own username, never showing a password', async () => {
      await assert.rejects(startEmbeddedBroker({ port: 0, username: 'reader' }), { code: 'NINES_ERR_INVALID_ARG', message: 'password: *** is required with username' });
      await assert.rejects(startEmbeddedBroker({ port: 0, password: 'hunter2' }), (err) => {
        assert.equal(err.message, 'username: undefined is required with password');
        assert.doesNotMatch(JSON.stringify(err.details), /hunter2/);
        return true;
      });
      await assert.rejects(startEmbeddedBroker({ port: 0, username: 'nines-gateway', password: 'pw', gateway: GATEWAY }), { code: 'NINES_ERR_INVALID_ARG' });
      await assert.rejects(startEmbeddedBroker({ port: 0, gateway: { clientId: 'x', prefix: 'nines/#' } }), { code: 'NINES_ERR_INVALID_ARG' });
    });

    it('gives local clients a loopback URL for a wildcard address', () => {
      assert.equal(localUrl('0.0.0.0', 1883), 'mqtt://127.0.0.1:1883');
      assert.equal(localUrl('::', 1883), 'mqtt://[::1]:1883');
      assert.equal(localUrl('127.0.0.1', 1884), 'mqtt://127.0.0.1:1884');
      assert.equal(localUrl('::1', 1883), 'mqtt://[::1]:1883');
    });
  });

  describe('login', () => {
    it('with a username and password every client must present them; a reader then sees everything', async () => {
      const b = await broker({ username: 'reader', password: 'right-pw', gateway: GATEWAY });
      assert.equal(b.loopback, true);
      assert.equal(b.login, 'reader');
      assert.equal((await attempt(b.url, { clientId: 'anon' })).code, 4, 'no login: bad user name or password');
      assert.equal((await attempt(b.url, { clientId: 'wrong', username: 'reader', password: 'wrong-pw' })).code, 4);
      assert.equal((await attempt(b.url, { clientId: 'other', username: 'other', password: 'right-pw' })).code, 4);
      const r = await reader(b.url, { clientId: 'reader-1', username: 'reader', password: 'right-pw' });
      const gw = await gatewayClient(b);
      await gw.publishAsync(STATUS, 'online', { qos: 1, retain: true });
      await gw.publishAsync(LATENCY, '{"seq":1}', { qos: 1 });
      await until(() => r.got.length >= 2, 'both messages');
      assert.deepEqual(r.got, [[STATUS, 'online', false], [LATENCY, '{"seq":1}', false]]);
      assert.deepEqual(b.refused(), { 'bad-login': 3, 'reserved-client-id': 0, 'client-id-in-use': 0, 'publish-under-prefix': 0, 'packet-too-large': 0, 'too-many-clients': 0 });
    });

    it('on loopback without a login any client may connect and subscribe', async () => {
      const b = await broker({ gateway: GATEWAY });
      assert.equal(b.login, null);
      const r = await reader(b.url, { clientId: 'local-sub' });
      const gw = await gatewayClient(b);
      await gw.publishAsync(LATENCY, 'x', { qos: 1 });
      await until(() => r.got.length === 1, 'the summary');
    });

    it('the gateway\'s username with a wrong password is refused', async () => {
      const b = await broker({ gateway: GATEWAY });
      const r = await attempt(b.url, { clientId: 'someone', username: b.gatewayAuth.username, password: 'guess' });
      assert.equal(r.code, 4);
    });

    it('the gateway\'s credential is random per start, and not enumerable on the broker object', async () => {
      const a = await broker({ gateway: GATEWAY });
      const c = await broker({ gateway: GATEWAY });
      assert.ok(a.gatewayAuth.password.length >= 40);
      assert.notEqual(a.gatewayAuth.password, c.gatewayAuth.password);
      assert.doesNotMatch(JSON.stringify(a), new RegExp(a.gatewayAuth.password));
      assert.equal((await broker()).gatewayAuth, null, 'no gateway, no credential');
    });
  });

  describe('only the gateway publishes under its prefix', () => {
    it('a foreign publish under the prefix is refused (the client is disconnected) and the gateway\'s retained status and summaries are unchanged', async () => {
      const b = await broker({ gateway: GATEWAY });
      const gw = await gatewayClient(b);
      await gw.publishAsync(STATUS, '{"state":"online"}', { qos: 1, retain: true });
      const r = await reader(b.url, { clientId: 'sub' });
      await until(() => r.on(STATUS).length === 1, 'the retained status');

      for (const [topic, payload, retain] of [[STATUS, '{"state":"offline","forged":true}', true], [LATENCY, '{"seq":99,"forged":true}', false], ['nines', 'bare prefix', true]]) {
        const { client } = await attempt(b.url, { clientId: `forger-${topic.length}` });
        const closed = new Promise((resolve) => client.once('close', resolve));
        let acked = false;
        client.publish(topic, payload, { qos: 1, retain }, (err) => { if (!err) acked = true; });
        await closed;
        // the connection is gone, so no acknowledgement can come later
        assert.equal(acked, false, `publish to ${topic} must not be acknowledged`);
      }
      // the gateway is unaffected and goes on publishing
      assert.equal(gw.connected, true);
      await gw.publishAsync(LATENCY, '{"seq":2}', { qos: 1 });
      await until(() => r.on(LATENCY).length === 1, 'the real summary');
      assert.deepEqual(r.got.map((m) => m.slice(0, 2)), [[STATUS, '{"state":"online"}'], [LATENCY, '{"seq":2}']], 'no forged message reached the subscriber');
      // a late subscriber finds the gateway's retained status, not the forged one
      const late = await reader(b.url, { clientId: 'late' });
      await until(() => late.on(STATUS).length === 1, 'the retained status');
      assert.deepEqual(late.on(STATUS), [[STATUS, '{"state":"online"}', true]]);
      assert.equal(b.refused()['publish-under-prefix'], 3);
    });

    it('other clients may publish outside the prefix, also on topics that only start like it', async () => {
      const b = await broker({ gateway: GATEWAY });
      const r = await reader(b.url, { clientId: 'sub' });
      const other = await connect(b.url, { clientId: 'other' });
      await other.publishAsync('plant/line1/temp', '21.5', { qos: 1 });
      await other.publishAsync('nines-other/x', 'y', { qos: 1 });
      await until(() => r.got.length === 2, 'both messages');
      assert.equal(other.connected, true);
      assert.equal(b.refused()['publish-under-prefix'], 0);
    });

    it('a foreign client\'s last will under the prefix is not published', async () => {
      const b = await broker({ gateway: GATEWAY });
      const gw = await gatewayClient(b);
      await gw.publishAsync(STATUS, '{"state":"online"}', { qos: 1, retain: true });
      const r = await reader(b.url, { clientId: 'sub' });
      await until(() => r.on(STATUS).length === 1, 'the retained status');
      const { client } = await attempt(b.url, { clientId: 'will-forger', will: { topic: STATUS, payload: Buffer.from('{"state":"offline","forged":true}'), qos: 1, retain: true } });
      client.stream.destroy(); // no DISCONNECT: the broker would publish the will
      await until(() => b.refused()['publish-under-prefix'] === 1, 'the will refused');
      const late = await reader(b.url, { clientId: 'late' });
      await until(() => late.on(STATUS).length === 1, 'the retained status');
      assert.deepEqual(late.on(STATUS), [[STATUS, '{"state":"online"}', true]]);
      assert.equal(r.on(STATUS).length, 1, 'no forged will reached the subscriber');
    });

    it('the gateway\'s own will is published', async () => {
      const b = await broker({ gateway: GATEWAY });
      const r = await reader(b.url, { clientId: 'sub' });
      const gw = await gatewayClient(b, { will: { topic: STATUS, payload: Buffer.from('{"state":"offline"}'), qos: 1, retain: true } });
      gw.stream.destroy();
      await until(() => r.on(STATUS).length === 1, 'the will');
      assert.equal(r.on(STATUS)[0][1], '{"state":"offline"}');
    });
  });

  describe('client ids', () => {
    it('the gateway\'s client id is reserved: refused while the gateway is away and while it is connected, and the gateway stays connected', async () => {
      const b = await broker({ gateway: GATEWAY });
      const away = await attempt(b.url, { clientId: GATEWAY.clientId });
      assert.equal(away.code, 2, 'identifier rejected');
      const gw = await gatewayClient(b);
      await gw.publishAsync(STATUS, 'online', { qos: 1, retain: true });
      let gwClosed = false;
      gw.on('close', () => { gwClosed = true; });
      const thief = await attempt(b.url, { clientId: GATEWAY.clientId });
      assert.equal(thief.connected, false);
      assert.equal(thief.code, 2);
      // the gateway is still the one connected, and still publishes
      const r = await reader(b.url, { clientId: 'sub' });
      await gw.publishAsync(LATENCY, '{"seq":3}', { qos: 1 });
      await until(() => r.on(LATENCY).length === 1, 'the summary after the attempt');
      assert.equal(gwClosed, false);
      assert.equal(gw.connected, true);
      assert.deepEqual(r.on(STATUS), [[STATUS, 'online', true]]);
      assert.equal(b.refused()['reserved-client-id'], 2);
    });

    it('a second connection with an id that is connected is refused, and the first stays', async () => {
      const b = await broker({ gateway: GATEWAY });
      const first = await reader(b.url, { clientId: 'dashboard' });
      let firstClosed = false;
      first.client.on('close', () => { firstClosed = true; });
      const second = await attempt(b.url, { clientId: 'dashboard' });
      assert.equal(second.code, 2);
      const gw = await gatewayClient(b);
      await gw.publishAsync(LATENCY, 'still here', { qos: 1 });
      await until(() => first.got.length === 1, 'the first subscriber still reading');
      assert.equal(firstClosed, false);
      // once the first has gone, the id is free again
      await first.client.endAsync();
      await connect(b.url, { clientId: 'dashboard' });
      assert.equal(b.refused()['client-id-in-use'], 1);
    });

    it('the gateway logging in again with its credential replaces its own stale session', async () => {
      const b = await broker({ gateway: GATEWAY });
      const stale = await gatewayClient(b);
      const closed = new Promise((resolve) => stale.once('close', resolve));
      const fresh = await gatewayClient(b);
      await closed;
      assert.equal(fresh.connected, true);
      await fresh.publishAsync(STATUS, 'online again', { qos: 1, retain: true });
    });

    it('without a gateway the broker is plain aedes apart from the login: a second client with a connected id takes over', async () => {
      const b = await broker();
      const first = await connect(b.url, { clientId: 'same' });
      const closed = new Promise((resolve) => first.once('close', resolve));
      await connect(b.url, { clientId: 'same' });
      await closed;
      const other = await connect(b.url, { clientId: 'anyone' });
      await other.publishAsync('nines/gw/status', 'anything', { qos: 1 });
    });
  });

  describe('reports', () => {
    it('tells onRefused at once, folds further refusals of the same reason into one report with a count, and flushes it on close', async () => {
      const refusals = [];
      const b = await startEmbeddedBroker({ port: 0, gateway: GATEWAY, onRefused: (r) => refusals.push(r) });
      cleanups.push(() => b.close());
      for (let i = 0; i < 3; i++) assert.equal((await attempt(b.url, { clientId: GATEWAY.clientId })).code, 2);
      assert.equal(refusals.length, 1, 'the first at once, the others held for the window');
      assert.equal(refusals[0].reason, 'reserved-client-id');
      assert.equal(refusals[0].clientId, GATEWAY.clientId);
      assert.match(refusals[0].remoteAddress, /127\.0\.0\.1/);
      assert.match(refusals[0].message, /^refused client "nines-gw" from \S*127\.0\.0\.1: this client id is reserved for the gateway$/);
      await b.close();
      assert.equal(refusals.length, 2);
      assert.equal(refusals[1].repeated, 1, 'the second report stands for the two refusals after the first');
    });

    it('quotes what a client sent, so control characters cannot reach a terminal', async () => {
      const refusals = [];
      const b = await broker({ gateway: GATEWAY, onRefused: (r) => refusals.push(r) });
      await connect(b.url, { clientId: 'x\u001b[2J' });
      assert.equal((await attempt(b.url, { clientId: 'x\u001b[2J' })).code, 2);
      assert.equal(refusals.length, 1);
      assert.ok(refusals[0].message.includes('"x\\u001b[2J"'), refusals[0].message);
      assert.ok(!refusals[0].message.includes('\u001b'));
    });
  });
});
