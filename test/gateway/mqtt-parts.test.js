'use strict';

const assert = require('node:assert/strict');
const { BoundedQueue } = require('../../gateway/runtime/mqtt/bounded-queue');
const { statusPayload, errorDigest, mergeDigests, errorPayload, encode } = require('../../gateway/runtime/mqtt/payloads');
const { topicsFor, filterMatches } = require('../../gateway/runtime/mqtt/topics');
const { parseBrokerUrl } = require('../../gateway/runtime/mqtt/broker-url');
const { NinesError } = require('../../gateway/base/errors');
const { publisherOptions, publisherJobs } = require('../../gateway/runtime/mqtt/publisher-options');
const { Publisher } = require('../../gateway/runtime/mqtt/publisher');
const { validateConfig } = require('../../gateway/runtime/config');
const { findMosquitto } = require('../helpers/mosquitto');

const item = (n, bytes = 10) => ({ n, bytes });

describe('gateway/runtime/mqtt/bounded-queue', () => {
  it('keeps items in order and drops the oldest past maxItems, returning them to be counted', () => {
    const q = new BoundedQueue({ maxItems: 3 });
    const dropped = [];
    for (let n = 1; n <= 5; n++) dropped.push(...q.push(item(n)));
    assert.deepEqual(dropped.map((i) => i.n), [1, 2]);
    assert.equal(q.length, 3);
    assert.deepEqual(q.drain().map((i) => i.n), [3, 4, 5]);
    assert.equal(q.length, 0);
    assert.equal(q.bytes, 0);
  });

  it('bounds the total bytes too', () => {
    const q = new BoundedQueue({ maxItems: 100, maxBytes: 25 });
    q.push(item(1));
    q.push(item(2));
    assert.deepEqual(q.push(item(3)).map((i) => i.n), [1]);
    assert.equal(q.bytes, 20);
    // an item bigger than the whole bound cannot stay either
    assert.deepEqual(q.push(item(4, 30)).map((i) => i.n), [2, 3, 4]);
    assert.equal(q.length, 0);
  });

  it('requeues in-flight items at the head, then trims the oldest', () => {
    const q = new BoundedQueue({ maxItems: 4 });
    q.push(item(3));
    q.push(item(4));
    q.push(item(5));
    const dropped = q.requeue([item(1), item(2)]);
    assert.deepEqual(dropped.map((i) => i.n), [1]);
    assert.deepEqual(q.drain().map((i) => i.n), [2, 3, 4, 5]);
  });

  it('with maxItems 0 keeps nothing', () => {
    const q = new BoundedQueue({ maxItems: 0 });
    assert.equal(q.push(item(1)).length, 1);
    assert.equal(q.length, 0);
  });

  it('does not grow with the total ever pushed (compacts as it shifts)', () => {
    const q = new BoundedQueue({ maxItems: 10 });
    for (let n = 0; n < 10000; n++) {
      q.push(item(n));
      q.shift();
    }
    assert.equal(q.length, 0);
    assert.ok(q._items.length < 2100);
  });
});

describe('gateway/runtime/mqtt/payloads', () => {
  it('status carries state, version, start time, jobs, reconnects and dropped counts', () => {
    const info = { gateway: 'gw', version: '1.2.3', started: '2026-01-01T00:00:00.000Z', jobs: ['a'], reconnects: 2, dropped: { total: 3, jobs: { a: 3 } } };
    assert.deepEqual(JSON.parse(statusPayload('online', info, { connected: 'x' })), {
      state: 'online', gateway: 'gw', version: '1.2.3', started: '2026-01-01T00:00:00.000Z', jobs: ['a'], connected: 'x', reconnects: 2, dropped: { total: 3, jobs: { a: 3 } }
    });
  });

  it('an error digest keeps the newest error and counts all of them by code', () => {
    const a = errorDigest(new NinesError('NINES_ERR_REPLY_TIMEOUT', 'no reply', { command: '@01' }), 1000);
    const b = errorDigest(new Error('plain'), 3000);
    const c = errorDigest('a string', 2000);
    const d = mergeDigests(mergeDigests(a, b), c);
    assert.equal(d.count, 3);
    assert.deepEqual(d.codes, { NINES_ERR_REPLY_TIMEOUT: 1, unknown: 2 });
    assert.deepEqual(d.latest, { code: null, message: 'plain' });
    assert.deepEqual([d.firstAt, d.lastAt], [1000, 3000]);
    const json = JSON.parse(errorPayload('gw', 'job', d));
    assert.deepEqual(json, {
      v: 1, gateway: 'gw', job: 'job', time: new Date(3000).toISOString(), code: null, message: 'plain',
      count: 3, suppressed: 2, codes: { NINES_ERR_REPLY_TIMEOUT: 1, unknown: 2 }, since: new Date(1000).toISOString()
    });
    assert.deepEqual(JSON.parse(errorPayload('gw', 'job', a)).details, { command: '@01' });
  });

  it('encodes objects as JSON and passes strings and buffers through', () => {
    assert.equal(encode({ a: 1 }).toString(), '{"a":1}');
    assert.equal(encode('x').toString(), 'x');
    const buf = Buffer.from([1, 2]);
    assert.equal(encode(buf), buf);
  });
});

describe('gateway/runtime/mqtt/topics', () => {
  it('builds <prefix>/<gateway>/status and <prefix>/<gateway>/<job>/<kind>', () => {
    const t = topicsFor('site/nines', 'edge-1');
    assert.equal(t.status, 'site/nines/edge-1/status');
    assert.equal(t.job('plc.hr_1', 'latency'), 'site/nines/edge-1/plc.hr_1/latency');
  });

  it('refuses names that would change the topic layout', () => {
    for (const bad of ['a/b', '+', '#', '', 'a b', null]) {
      assert.throws(() => topicsFor('nines', 'gw').job(bad, 'value'), { code: 'NINES_ERR_INVALID_ARG' });
      assert.throws(() => topicsFor('nines', bad), { code: 'NINES_ERR_INVALID_ARG' });
    }
    assert.throws(() => topicsFor('nines/+', 'gw'), { code: 'NINES_ERR_INVALID_ARG' });
  });
});

describe('gateway/runtime/mqtt/topics: filters', () => {
  it('matches + to one level and # to the rest, including none, and nothing else', () => {
    const yes = [['nines/gw/+/write', 'nines/gw/plc/write'], ['nines/gw/+/+/write', 'nines/gw/bus/m1/write'], ['nines/#', 'nines/gw/plc/write'], ['nines/#', 'nines'], ['a/b', 'a/b']];
    const no = [['nines/gw/+/write', 'nines/gw/bus/m1/write'], ['nines/gw/+/write', 'nines/gw/plc/write/result'], ['nines/gw/+/+/write', 'nines/gw/plc/write'], ['nines/#', 'other/gw'], ['a/b', 'a/c'], ['a/+', 'a']];
    for (const [f, t] of yes) assert.equal(filterMatches(f, t), true, `${f} ~ ${t}`);
    for (const [f, t] of no) assert.equal(filterMatches(f, t), false, `${f} !~ ${t}`);
  });
});

describe('gateway/runtime/mqtt/broker-url', () => {
  it('knows the default port and TLS of each scheme', () => {
    const cases = {
      'mqtt://h': [1883, false], 'tcp://h': [1883, false], 'mqtts://h': [8883, true], 'ssl://h': [8883, true],
      'ws://h/mqtt': [80, false], 'wss://h': [443, true], 'mqtt://h:80': [80, false], 'mqtt://[::1]:1884': [1884, false]
    };
    for (const [url, [port, tls]] of Object.entries(cases)) {
      const u = parseBrokerUrl(url);
      assert.deepEqual([u.port, u.tls], [port, tls], url);
    }
    assert.equal(parseBrokerUrl('mqtt://[::1]:1884').host, '::1');
  });

  it('refuses what MQTT.js would silently reinterpret: unknown schemes, query options', () => {
    for (const bad of ['http://h', 'h:1883', 'mqtt://h?clientId=x', 'mqtt://h/path', 'mqtt://u:p@h', 'mqtt://h:0', '', 7]) {
      assert.throws(() => parseBrokerUrl(bad, 'mqtt.url'), (err) => err.code === 'NINES_ERR_INVALID_ARG' && err.details.field === 'mqtt.url', String(bad));
    }
  });
});

describe('gateway/runtime/mqtt/publisher-options', () => {
  const config = (mqtt) => validateConfig({
    gateway: { id: 'edge-1' },
    mqtt,
    devices: { d: { target: 'ascii://127.0.0.1:9500' } },
    jobs: [{ name: 'j', device: 'd', command: '@01', rate: 1, values: { mode: 'on-change', maxRate: '4/s' } }]
  }, { env: {} });

  it('maps a config with a broker URL to Publisher options a Publisher accepts', () => {
    const opts = publisherOptions(config({ url: 'mqtt://h:1884', username: 'u', password: 'p', buffer: 5, keepalive: '10s' }), { version: '1.0.0' });
    assert.deepEqual(opts, {
      url: 'mqtt://h:1884', prefix: 'nines', gatewayId: 'edge-1', clientId: 'nines-edge-1', qos: 1, protocolVersion: 4,
      bufferMax: 5, keepaliveMs: 10000, connectTimeoutMs: 10000, errorsMinIntervalMs: 1000, reconnectInitialMs: 500,
      reconnectMaxMs: 30000, username: 'u', password: 'p', version: '1.0.0'
    });
    assert.ok(new Publisher(opts));
  });

  it('takes the embedded broker\'s URL when the config has none, and the value window per job', () => {
    const c = config(undefined);
    assert.equal(publisherOptions(c, { url: 'mqtt://127.0.0.1:1883' }).url, 'mqtt://127.0.0.1:1883');
    assert.deepEqual(publisherJobs(c), [{ name: 'j', valuesMinIntervalMs: 250 }]);
  });
});

describe('gateway/runtime/mqtt/publisher: answers to commands', () => {
  it('does not keep an answer while disconnected, and counts it in stats.repliesDropped', () => {
    const p = new Publisher({ url: 'mqtt://127.0.0.1:1', gatewayId: 'gw' });
    assert.equal(p.stats.repliesDropped, 0);
    assert.equal(p.reply('nines/gw/plc/write/result', { id: '1', ok: true }), false);
    assert.equal(p.reply('nines/gw/plc/write/result', { id: '2', ok: true }), false);
    assert.equal(p.stats.repliesDropped, 2);
  });
});

describe('test/helpers/mosquitto', () => {
  it('says how to install Mosquitto when the binary is missing', () => {
    assert.throws(() => findMosquitto({ env: { PATH: '/nonexistent' }, fallbacks: [] }), /mosquitto binary not found .*apt-get install mosquitto/);
  });

  it('takes $MOSQUITTO_BIN as the only candidate and names it when wrong', () => {
    assert.throws(() => findMosquitto({ env: { MOSQUITTO_BIN: '/nonexistent/mosquitto' } }), /MOSQUITTO_BIN=\/nonexistent\/mosquitto is not an executable file/);
  });
});
