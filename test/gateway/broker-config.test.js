'use strict';

/**
 * The embedded broker's config rules: a host beyond loopback needs a login, the login's parts
 * come together (the password also from NINES_MQTT_EMBEDDED_PASSWORD), and no password is ever
 * shown. Pure: nothing listens.
 */

const assert = require('node:assert/strict');
const { validateConfig, redactConfig } = require('../../gateway/runtime/config');
const { problemsOf } = require('./config-problems');
const { isLoopbackHost } = require('../../gateway/runtime/loopback');
const D = require('../../gateway/runtime/config/defaults');

/** What the embedded broker's limits are when the config names none */
const EMBEDDED_LIMITS = { maxPacketBytes: D.MQTT_EMBEDDED_MAX_PACKET_BYTES, maxClients: D.MQTT_EMBEDDED_MAX_CLIENTS };

const base = (embedded) => ({
  gateway: { id: 'edge-1' },
  mqtt: embedded === undefined ? {} : { embedded },
  devices: { d: { target: 'ascii://127.0.0.1:9500' } },
  jobs: [{ name: 'j', device: 'd', command: '@01', rate: '10/s' }]
});

describe('gateway/config: the embedded broker\'s host and login', () => {
  it('counts 127.0.0.0/8, ::1 and localhost as loopback, and nothing else', () => {
    for (const h of ['127.0.0.1', '127.0.0.2', '127.255.255.254', 'localhost', 'LOCALHOST', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) {
      assert.equal(isLoopbackHost(h), true, h);
    }
    for (const h of ['0.0.0.0', '::', '10.0.0.7', '192.168.1.2', '128.0.0.1', 'fe80::1', '::ffff:10.0.0.1', 'edge-pc', 'localhost.example', '', undefined, null, 7]) {
      assert.equal(isLoopbackHost(h), false, String(h));
    }
  });

  it('a host beyond loopback without a login is an error naming mqtt.embedded.host and what to set', () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.7']) {
      const { err, errors } = problemsOf(base({ host }));
      assert.equal(errors.length, 1, err.message);
      assert.equal(errors[0].path, 'mqtt.embedded.host');
      assert.equal(errors[0].value, host);
      assert.match(errors[0].rule, /^binds beyond loopback; set mqtt\.embedded\.username and mqtt\.embedded\.password \(or NINES_MQTT_EMBEDDED_PASSWORD\)/);
      assert.match(err.message, new RegExp(`mqtt\\.embedded\\.host: "${host.replace(/\./g, '\\.')}" binds beyond loopback`));
    }
  });

  it('a host name other than localhost counts as beyond loopback, saying why', () => {
    const { errors } = problemsOf(base({ host: 'edge-pc.local' }));
    assert.equal(errors[0].path, 'mqtt.embedded.host');
    assert.match(errors[0].rule, /is a name, so it may bind beyond loopback \(only 127\.0\.0\.0\/8, ::1 and localhost count as loopback\)/);
  });

  it('loopback needs no login: open to local subscribers, as before', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1']) {
      const c = validateConfig(base({ host, port: 0 }), { env: {} });
      assert.deepEqual(c.mqtt.embedded, { host, port: 0, ...EMBEDDED_LIMITS });
    }
  });

  it('beyond loopback with a login from the file, or with the password from NINES_MQTT_EMBEDDED_PASSWORD', () => {
    const c = validateConfig(base({ host: '0.0.0.0', username: 'reader', password: 'hunter2' }), { env: {} });
    assert.deepEqual(c.mqtt.embedded, { host: '0.0.0.0', port: 1883, ...EMBEDDED_LIMITS, auth: { username: 'reader', password: 'hunter2', passwordSource: 'file' } });
    const e = validateConfig(base({ host: '0.0.0.0', username: 'reader' }), { env: { NINES_MQTT_EMBEDDED_PASSWORD: 'from-env' } });
    assert.deepEqual(e.mqtt.embedded.auth, { username: 'reader', password: 'from-env', passwordSource: 'env' });
    // the file wins over the environment
    const f = validateConfig(base({ username: 'reader', password: 'file-pw' }), { env: { NINES_MQTT_EMBEDDED_PASSWORD: 'from-env' } });
    assert.equal(f.mqtt.embedded.auth.password, 'file-pw');
  });

  it('a login on loopback is kept too (then every client must log in there as well)', () => {
    const c = validateConfig(base({ username: 'reader', password: 'pw' }), { env: {} });
    assert.deepEqual(c.mqtt.embedded.auth, { username: 'reader', password: 'pw', passwordSource: 'file' });
  });

  it('half a login is an error at the missing field', () => {
    let r = problemsOf(base({ host: '0.0.0.0', username: 'reader' }));
    assert.deepEqual(r.errors.map((e) => [e.path, e.rule]), [['mqtt.embedded.password', 'is required with mqtt.embedded.username (or set NINES_MQTT_EMBEDDED_PASSWORD)']]);
    r = problemsOf(base({ password: 'pw' }));
    assert.deepEqual(r.errors.map((e) => [e.path, e.rule]), [['mqtt.embedded.username', 'is required with mqtt.embedded.password']]);
    r = problemsOf(base({}), { NINES_MQTT_EMBEDDED_PASSWORD: 'pw' });
    assert.deepEqual(r.errors.map((e) => [e.path, e.rule]), [['mqtt.embedded.username', 'is required: the embedded broker\'s password comes from NINES_MQTT_EMBEDDED_PASSWORD']]);
  });

  it('maxPacketSize takes a size and maxClients a count; out of range or not a size is an error at the field', () => {
    const c = validateConfig(base({ maxPacketSize: '2MiB', maxClients: 8 }), { env: {} });
    assert.equal(c.mqtt.embedded.maxPacketBytes, 2 * 1024 * 1024);
    assert.equal(c.mqtt.embedded.maxClients, 8);
    for (const [v, rule] of [['10', /^must be from 1024 bytes/], ['1GB', /^must be from 1024 bytes .* to 268435460 bytes/], ['lots', /^is not a size/]]) {
      const { errors } = problemsOf(base({ maxPacketSize: v }));
      assert.deepEqual(errors.map((e) => [e.path, e.value]), [['mqtt.embedded.maxPacketSize', v]]);
      assert.match(errors[0].rule, rule);
    }
    assert.deepEqual(problemsOf(base({ maxClients: 0 })).errors.map((e) => e.path), ['mqtt.embedded.maxClients']);
  });

  it('the gateway\'s own username is reserved', () => {
    const { errors } = problemsOf(base({ username: 'nines-gateway', password: 'pw' }));
    assert.equal(errors[0].path, 'mqtt.embedded.username');
    assert.match(errors[0].rule, /reserved for the gateway's own client/);
  });

  it('empty or mistyped login fields are schema errors, and a password is never shown', () => {
    const { err, errors } = problemsOf(base({ host: '0.0.0.0', username: 'reader', password: '' }));
    assert.ok(errors.some((e) => e.path === 'mqtt.embedded.password' && e.value === '***'), err.message);
    const wrong = problemsOf(base({ username: 'reader', password: 12345678 }));
    assert.doesNotMatch(wrong.err.message, /12345678/);
  });

  it('mqtt.username and mqtt.password still need mqtt.url, and the message points to mqtt.embedded', () => {
    const { errors } = problemsOf({ ...base(), mqtt: { username: 'u', password: 'secret-pw' } });
    assert.deepEqual(errors.map((e) => e.path).sort(), ['mqtt.password', 'mqtt.username']);
    assert.match(errors.find((e) => e.path === 'mqtt.username').rule, /only used with mqtt\.url \(the embedded broker's login is mqtt\.embedded\.username\)/);
    assert.equal(errors.find((e) => e.path === 'mqtt.password').value, '***');
  });

  it('redactConfig hides the embedded broker\'s password', () => {
    const c = validateConfig(base({ host: '0.0.0.0', username: 'reader', password: 'hunter2' }), { env: {} });
    const text = JSON.stringify(redactConfig(c));
    assert.doesNotMatch(text, /hunter2/);
    assert.match(text, /"username":"reader"/);
    assert.equal(c.mqtt.embedded.auth.password, 'hunter2', 'the config itself is not changed');
  });
});
