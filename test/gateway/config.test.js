'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { loadConfig, validateConfig, redactConfig } = require('../../gateway/runtime/config');
const D = require('../../gateway/runtime/config/defaults');
const { createOpSource } = require('../../gateway/jobs/op-source');

/** What the embedded broker's limits are when the config names none */
const EMBEDDED_LIMITS = { maxPacketBytes: D.MQTT_EMBEDDED_MAX_PACKET_BYTES, maxClients: D.MQTT_EMBEDDED_MAX_CLIENTS };

const EXAMPLE = path.join(__dirname, '..', '..', 'gateway', 'examples', 'gateway.yaml');

const YAML_TEXT = `
gateway: { id: edge-1, interval: 10s }
mqtt:    { url: "mqtt://127.0.0.1:1883", prefix: nines }
devices:
  ed588: { target: "ascii://127.0.0.1:9500", timeout: 1s }
  plc1:  { target: "modbus+tcp://127.0.0.1:5020?unitId=1", timeout: 500ms }
jobs:
  - { name: ed588-inputs, device: ed588, command: "@01", rate: 1000/s, connections: 1 }
  - { name: plc1-hr, device: plc1, read: { fc: 3, address: 0, quantity: 10 }, rate: 100/s, values: on-change }
`;

/** Runs fn, expects NINES_ERR_CONFIG, returns the error */
function configError (fn) {
  try {
    fn();
  } catch (err) {
    assert.equal(err.code, 'NINES_ERR_CONFIG', err.message);
    return err;
  }
  assert.fail('expected NINES_ERR_CONFIG');
}

describe('gateway/config: loading', () => {
  let dir;
  before(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-config-')); });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const write = (name, text) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    return file;
  };

  it('loads the design.md example from YAML text and normalizes it', () => {
    const c = loadConfig(YAML_TEXT, { env: {} });
    assert.deepEqual(c.gateway, { id: 'edge-1', intervalMs: 10000, workers: 'auto', mode: 'worker', hlog: null, metrics: null, http: null });
    assert.equal(c.mqtt.url, 'mqtt://127.0.0.1:1883');
    assert.equal(c.mqtt.embedded, null);
    assert.equal(c.mqtt.prefix, 'nines');
    assert.equal(c.mqtt.clientId, 'nines-edge-1');
    assert.equal(c.mqtt.qos, 1);
    assert.equal(c.mqtt.bufferMax, 1000);
    assert.equal(c.mqtt.keepaliveMs, 30000);
    assert.equal(c.devices.ed588.target.protocol, 'ascii');
    assert.equal(c.devices.ed588.target.port, 9500);
    assert.equal(c.devices.ed588.timeoutMs, 1000);
    assert.equal(c.devices.ed588.connectTimeoutMs, 5000);
    assert.equal(c.devices.ed588.queueMax, 64);
    assert.equal(c.devices.ed588.maxConnections, 1, 'one connection unless the config says more');
    assert.deepEqual(c.devices.ed588.backoff, { initialMs: 100, maxMs: 10000 });
    assert.equal(c.devices.plc1.timeoutMs, 500);
    assert.equal(c.devices.plc1.target.unitId, 1);
    // the jobs are the specs that run (jobs/spec.js), built once by the config check
    const [a, b] = c.jobs;
    assert.equal(a.kind, 'command');
    assert.equal(a.operation, '@01');
    assert.equal(a.ratePerSec, 1000);
    assert.equal(a.connections, 1);
    assert.equal(a.policy, 'skip', 'poll jobs skip missed slots by default');
    assert.equal(a.count, undefined);
    assert.equal(a.durationMs, undefined);
    assert.equal(a.intervalMs, 10000);
    assert.equal(a.values.mode, 'off');
    assert.equal(b.kind, 'read');
    assert.deepEqual({ ...b.operation }, { fc: 3, address: 0, quantity: 10 });
    assert.equal(b.target.unitId, 1);
    assert.deepEqual(b.values, { mode: 'on-change', deadband: 0, n: 1, minIntervalMs: 100 });
    assert.deepEqual(c.source, { path: null, format: 'yaml' });
  });

  it('reads YAML and JSON files alike, choosing the parser by extension', () => {
    const fromYaml = loadConfig(write('gw.yaml', YAML_TEXT), { env: {} });
    const obj = require('yaml').parse(YAML_TEXT);
    const fromJson = loadConfig(write('gw.json', JSON.stringify(obj, null, 2)), { env: {} });
    assert.equal(fromYaml.source.format, 'yaml');
    assert.equal(fromJson.source.format, 'json');
    assert.deepEqual({ ...fromJson, source: null }, { ...fromYaml, source: null });
  });

  it('tells JSON text from YAML text by content, and honours an explicit format', () => {
    const json = JSON.stringify(require('yaml').parse(YAML_TEXT));
    assert.equal(loadConfig(json, { env: {} }).source.format, 'json');
    assert.equal(loadConfig(write('gw.conf', json), { env: {} }).source.format, 'json');
    assert.equal(loadConfig(write('gw2.conf', YAML_TEXT), { env: {} }).source.format, 'yaml');
    assert.equal(loadConfig(write('gw3.conf', json), { format: 'yaml', env: {} }).source.format, 'yaml');
  });

  it('rejects an unknown format option with NINES_ERR_INVALID_ARG', () => {
    assert.throws(() => loadConfig(YAML_TEXT, { format: 'toml' }), { code: 'NINES_ERR_INVALID_ARG' });
    assert.throws(() => loadConfig(42), { code: 'NINES_ERR_INVALID_ARG' });
  });

  it('names the file when it cannot be read', () => {
    const missing = path.join(dir, 'nope.yaml');
    const err = configError(() => loadConfig(missing));
    assert.match(err.message, /nope\.yaml: no such file/);
    assert.equal(err.details.errors[0].value, missing);
  });

  it('gives line and column of a YAML syntax error', () => {
    const err = configError(() => loadConfig('devices:\n  a: { target: "ascii://h:1"\njobs: []\n'));
    const [e] = err.details.errors;
    assert.equal(e.path, '');
    assert.match(e.rule, /YAML syntax error/);
    assert.equal(typeof e.line, 'number');
    assert.equal(typeof e.column, 'number');
    assert.match(err.message, new RegExp(`<text>:${e.line}:${e.column}`));
  });

  it('explains an unquoted @ command in YAML', () => {
    const err = configError(() => loadConfig('jobs:\n  - { name: a, device: d, command: @01, rate: 1 }\n'));
    assert.deepEqual([err.details.errors[0].line, err.details.errors[0].column], [2, 36]);
    assert.match(err.message, /quote/);
  });

  it('explains an unquoted # command in YAML, which starts a comment', () => {
    const err = configError(() => loadConfig('devices: { d: { target: "ascii://h:1" } }\njobs:\n  - { name: a, device: d, command: #012, rate: 1 }\n'));
    assert.match(err.message, /line 3: a # after a space starts a YAML comment/);
  });

  it('reports a duplicate key with its position, in YAML and in JSON', () => {
    const y = configError(() => loadConfig('devices: {}\njobs: []\njobs: []\n'));
    assert.equal(y.details.errors[0].line, 3);
    assert.match(y.message, /unique/);
    const j = configError(() => loadConfig('{\n  "devices": {},\n  "jobs": [],\n  "jobs": []\n}', { format: 'json' }));
    assert.equal(j.details.errors[0].line, 4);
  });

  it('gives line and column of a JSON syntax error', () => {
    const err = configError(() => loadConfig('{\n  "devices": {}\n  "jobs": []\n}'));
    const [e] = err.details.errors;
    assert.match(e.rule, /JSON syntax error/);
    assert.equal(e.line, 3);
  });

  it('points each validation problem at its line in the file, in file order', () => {
    const file = write('bad.yaml', YAML_TEXT.replace('rate: 100/s', 'rate: fast').replace('timeout: 1s', 'timeuot: 1s'));
    const err = configError(() => loadConfig(file, { env: {} }));
    assert.deepEqual(err.details.errors.map((e) => [e.path, e.line]), [
      ['devices.ed588.timeuot', 5],
      ['jobs[1].rate', 9]
    ]);
    assert.match(err.message, /bad\.yaml:9:\d+: jobs\[1\]\.rate: "fast" is not a rate/);
  });

  it('rejects an empty document', () => {
    const err = configError(() => loadConfig('# nothing here\n'));
    assert.match(err.message, /is empty/);
  });

  it('loads gateway/examples/gateway.yaml, which uses the simulator defaults', () => {
    const c = loadConfig(EXAMPLE, { env: {} });
    assert.equal(c.source.path, EXAMPLE);
    assert.equal(c.devices.ed588.target.url, 'ascii://127.0.0.1:9500?address=01&checksum=off');
    assert.equal(c.devices.plc1.target.url, 'modbus+tcp://127.0.0.1:5020?unitId=1');
    assert.deepEqual(c.jobs.map((j) => [j.name, j.kind]), [
      ['ed588-inputs', 'command'], ['probe', 'generator'], ['plc1-hr', 'read'], ['plc1-setpoint', 'write'], ['plc1-process', 'tags']
    ]);
    assert.deepEqual(c.jobs[4].tags.map((t) => t.name), ['counter', 'level', 'flow', 'pump_on']);
    assert.equal(c.jobs[1].ratePerSec, Infinity);
    assert.equal(c.jobs[1].count, 100000);
    assert.equal(c.jobs[3].durationMs, 3600000);
    // it runs as it is: the embedded broker, where subscribers expect it
    assert.equal(c.mqtt.url, null);
    assert.deepEqual(c.mqtt.embedded, { host: '127.0.0.1', port: 1883, ...EMBEDDED_LIMITS });
  });
});

describe('gateway/config: normalization', () => {
  const base = () => ({
    devices: { d: { target: 'ascii://127.0.0.1:9500' } },
    jobs: [{ name: 'j', device: 'd', command: '@01', rate: 'max' }]
  });

  it('fills in defaults and picks the embedded broker when mqtt is omitted', () => {
    const c = validateConfig(base(), { env: {} });
    assert.deepEqual(c.mqtt.embedded, { host: '127.0.0.1', port: 1883, ...EMBEDDED_LIMITS });
    assert.equal(c.mqtt.url, null);
    assert.equal(c.mqtt.prefix, 'nines');
    assert.equal(c.gateway.intervalMs, 10000);
    assert.match(c.gateway.id, /^[A-Za-z0-9_.-]{1,64}$/);
    assert.equal(c.mqtt.clientId, `nines-${c.gateway.id}`);
    assert.equal(c.jobs[0].ratePerSec, Infinity);
  });

  it('keeps the embedded broker with mqtt settings but no url', () => {
    const c = validateConfig({ ...base(), mqtt: { prefix: 'site-a/nines', embedded: { port: 0 } } }, { env: {} });
    assert.deepEqual(c.mqtt.embedded, { host: '127.0.0.1', port: 0, ...EMBEDDED_LIMITS });
    assert.equal(c.mqtt.prefix, 'site-a/nines');
  });

  it('converts durations to ms and rates to per second', () => {
    const obj = base();
    obj.gateway = { interval: '1.5s', workers: 4, mode: 'inline' };
    obj.mqtt = { url: 'mqtt://h', keepalive: '1m', connectTimeout: 2500, errorInterval: '5s', reconnect: { initial: '250ms', max: '1m' } };
    obj.devices.d.timeout = '250ms';
    obj.jobs[0] = { ...obj.jobs[0], rate: '60/min', duration: '2h', values: { mode: 'every', n: 100, maxRate: '2/s' } };
    const c = validateConfig(obj, { env: {} });
    assert.deepEqual(c.gateway, { id: c.gateway.id, intervalMs: 1500, workers: 4, mode: 'inline', hlog: null, metrics: null, http: null });
    assert.equal(c.mqtt.keepaliveMs, 60000);
    assert.equal(c.mqtt.connectTimeoutMs, 2500);
    assert.equal(c.mqtt.errorsMinIntervalMs, 5000);
    assert.equal(c.mqtt.reconnectInitialMs, 250);
    assert.equal(c.mqtt.reconnectMaxMs, 60000);
    assert.equal(c.devices.d.timeoutMs, 250);
    assert.equal(c.jobs[0].ratePerSec, 1);
    assert.equal(c.jobs[0].durationMs, 7200000);
    assert.deepEqual(c.jobs[0].values, { mode: 'every', deadband: 0, n: 100, minIntervalMs: 500 });
  });

  it('accepts every broker URL scheme: mqtt, mqtts, tcp, ssl, ws, wss', () => {
    for (const url of ['mqtt://h:1883', 'mqtts://h:8883', 'tcp://h', 'ssl://h', 'ws://h:8080/mqtt', 'wss://h/mqtt']) {
      assert.equal(validateConfig({ ...base(), mqtt: { url } }, { env: {} }).mqtt.url, url);
    }
  });

  it('allows catchUp with rate max, where it has no effect', () => {
    const obj = base();
    obj.jobs[0].catchUp = 'skip';
    assert.equal(obj.jobs[0].rate, 'max');
    assert.equal(validateConfig(obj, { env: {} }).jobs[0].policy, 'closed');
  });

  it('takes the unit id of a Modbus op from the target unless the op sets one', () => {
    const c = validateConfig({
      devices: { m: { target: 'modbus+tcp://127.0.0.1:5020?unitId=7', allowWrites: true } },
      jobs: [
        { name: 'a', device: 'm', read: { fc: 4, address: 1, quantity: 2 }, rate: 1 },
        { name: 'b', device: 'm', write: { fc: 16, address: 1, values: [1, 2], unitId: 3 }, rate: 1 }
      ]
    }, { env: {} });
    // what each job sends (jobs/op-source.js defaults the unit id to the job's target)
    const sent = c.jobs.map((j) => createOpSource({ [j.kind]: j.operation }, j.target).nextOp(0));
    assert.equal(sent[0].unitId, 7);
    assert.equal(sent[1].unitId, 3);
    assert.deepEqual([...sent[1].values], [1, 2]);
  });

  it('takes the password from NINES_MQTT_PASSWORD when the file has none', () => {
    const obj = { ...base(), mqtt: { url: 'mqtt://h', username: 'gw' } };
    const c = validateConfig(obj, { env: { NINES_MQTT_PASSWORD: 's3cret' } });
    assert.equal(c.mqtt.password, 's3cret');
    assert.equal(c.mqtt.passwordSource, 'env');
  });

  it('prefers the password in the file over the environment', () => {
    const obj = { ...base(), mqtt: { url: 'mqtt://h', username: 'gw', password: 'file-pw' } };
    const c = validateConfig(obj, { env: { NINES_MQTT_PASSWORD: 'env-pw' } });
    assert.equal(c.mqtt.password, 'file-pw');
    assert.equal(c.mqtt.passwordSource, 'file');
  });

  it('reads the environment by default (process.env)', () => {
    const saved = process.env.NINES_MQTT_PASSWORD;
    process.env.NINES_MQTT_PASSWORD = 'from-process-env';
    try {
      const c = validateConfig({ ...base(), mqtt: { url: 'mqtt://h', username: 'gw' } });
      assert.equal(c.mqtt.password, 'from-process-env');
    } finally {
      if (saved === undefined) delete process.env.NINES_MQTT_PASSWORD;
      else process.env.NINES_MQTT_PASSWORD = saved;
    }
  });

  it('never shows a password in an error or in a redacted config', () => {
    const err = configError(() => validateConfig({ ...base(), mqtt: { url: 'mqtt://h', password: 'hunter2' } }, { env: {} }));
    assert.doesNotMatch(err.message, /hunter2/);
    assert.doesNotMatch(JSON.stringify(err.details), /hunter2/);
    assert.match(err.message, /mqtt\.password: "\*\*\*" is set but mqtt\.username is not/);
    const c = validateConfig({ ...base(), mqtt: { url: 'mqtt://h', username: 'u', password: 'hunter2' } }, { env: {} });
    assert.doesNotMatch(JSON.stringify(redactConfig(c)), /hunter2/);
  });

  it('reads TLS files relative to the config file and passes their contents on', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-tls-'));
    try {
      fs.writeFileSync(path.join(dir, 'ca.pem'), 'CA PEM');
      const file = path.join(dir, 'gw.yaml');
      fs.writeFileSync(file, 'mqtt: { url: "mqtts://h", tls: { ca: ca.pem, rejectUnauthorized: false } }\n' +
        'devices: { d: { target: "ascii://127.0.0.1:9500" } }\njobs: [ { name: j, device: d, command: "@01", rate: 1 } ]\n');
      const c = loadConfig(file, { env: {} });
      assert.equal(c.mqtt.tls.ca.toString(), 'CA PEM');
      assert.equal(c.mqtt.tls.caPath, path.join(dir, 'ca.pem'));
      assert.equal(c.mqtt.tls.rejectUnauthorized, false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
