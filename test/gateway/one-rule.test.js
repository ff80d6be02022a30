'use strict';

/**
 * Each rule of a device or a job lives in one place (devices/limits.js, jobs/limits.js and the
 * builders), and every edge a value enters by refuses it with that rule and that limit: the
 * builder itself (the API), the gateway's config, the Node-RED config nodes and dialogs, and the
 * CLI's flags (issue 19).
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { buildDeviceSpec } = require('../../gateway/devices/spec');
const { buildJobSpec } = require('../../gateway/jobs/spec');
const DL = require('../../gateway/devices/limits');
const { MAX_QUIRK_DELAY_MS } = require('../../gateway/drivers/connection-options');
const { checkConfig } = require('../../gateway/runtime/config/validate');
const { modbusDevice, asciiDevice } = require('../../nodes/lib/device-config');
const { pollSettings, jobKey } = require('../../nodes/lib/poll-spec');
const { flagErrors } = require('../../gateway/cli/args');
const { runProbe } = require('../../gateway/measure/probe');

const TCP = 'modbus+tcp://127.0.0.1:5020';
const RTU = 'modbus+rtu:///dev/ttyUSB0?baudRate=9600';

/** The builder's refusal: {code, field, rule} */
function fromBuilder (fn) {
  try { fn(); } catch (err) { return { code: err.code, field: err.details.field, rule: err.details.rule, message: err.message }; }
  return assert.fail('the builder took it');
}

/** The config's refusal of one device or job: its only problem {path, rule} */
function fromConfig (obj) {
  const { config, problems } = checkConfig({ mqtt: { url: 'mqtt://127.0.0.1' }, ...obj }, { env: {} });
  assert.equal(config, null, 'the config took it');
  const { errors } = problems.toError().details;
  assert.equal(errors.length, 1, JSON.stringify(errors));
  return errors[0];
}

/** The Node-RED config node's refusal (nodes/lib/device-config.js) */
const fromNode = (fn) => fromBuilder(fn);

const oneJob = { name: 'j', device: 'd', read: { fc: 3, address: 0, quantity: 1 }, rate: '1/s' };

describe('one rule, one limit, at every edge', () => {
  it('a device timeout above the one ceiling (1 h) is refused with the same rule by the builder, the config and the Node-RED device', () => {
    const over = DL.MAX_DURATION_MS + 1;
    assert.equal(DL.MAX_DURATION_MS, 3600000);
    const b = fromBuilder(() => buildDeviceSpec({ name: 'd', target: TCP, timeoutMs: over }));
    const c = fromConfig({ devices: { d: { target: TCP, timeout: over } }, jobs: [oneJob] });
    const n = fromNode(() => modbusDevice({ transport: 'tcp', host: '127.0.0.1', timeout: String(over) }, 'd'));
    assert.deepEqual([b.code, b.field], ['NINES_ERR_INVALID_ARG', 'timeoutMs']);
    assert.equal(c.path, 'devices.d.timeout');
    assert.deepEqual([n.code, n.field], ['NINES_ERR_INVALID_ARG', 'timeout']);
    assert.match(b.rule, /from 1ms to 1h$/);
    assert.equal(c.rule, b.rule);
    assert.equal(n.rule, b.rule);
    // the ceiling itself is taken everywhere
    assert.equal(buildDeviceSpec({ name: 'd', target: TCP, timeoutMs: '1h' }).timeoutMs, 3600000);
    assert.equal(modbusDevice({ transport: 'tcp', host: '127.0.0.1', timeout: '3600000' }, 'd').spec.timeoutMs, 3600000);
  });

  it('the connect timeout and the backoff take the same ceiling, in YAML and in both Node-RED devices', () => {
    const over = DL.MAX_DURATION_MS + 1;
    const b = fromBuilder(() => buildDeviceSpec({ name: 'd', target: TCP, connectTimeoutMs: over }));
    assert.equal(fromConfig({ devices: { d: { target: TCP, connectTimeout: over } }, jobs: [oneJob] }).rule, b.rule);
    assert.equal(fromNode(() => asciiDevice({ host: '127.0.0.1', connectTimeout: over }, 'd')).rule, b.rule);
    const bb = fromBuilder(() => buildDeviceSpec({ name: 'd', target: TCP, backoff: { initialMs: over } }));
    assert.equal(bb.field, 'backoff.initialMs');
    assert.equal(bb.rule, b.rule);
    const cb = fromConfig({ devices: { d: { target: TCP, backoff: { min: over } } }, jobs: [oneJob] });
    assert.deepEqual([cb.path, cb.rule], ['devices.d.backoff.min', b.rule]);
    const nb = fromNode(() => modbusDevice({ transport: 'tcp', host: '127.0.0.1', backoffMin: over }, 'd'));
    assert.deepEqual([nb.field, nb.rule], ['backoffMin', b.rule]);
  });

  it('backoff max below min: one check, stated in each edge\'s names with the same bound', () => {
    const b = fromBuilder(() => buildDeviceSpec({ name: 'd', target: TCP, backoff: { initialMs: 2000, maxMs: 1000 } }));
    const c = fromConfig({ devices: { d: { target: TCP, backoff: { min: '2s', max: '1s' } } }, jobs: [oneJob] });
    const n = fromNode(() => modbusDevice({ transport: 'tcp', host: '127.0.0.1', backoffMin: 2000, backoffMax: 1000 }, 'd'));
    assert.deepEqual([b.field, b.rule], ['backoff.maxMs', 'must be at least backoff.initialMs (2000 ms)']);
    assert.deepEqual([c.path, c.rule], ['devices.d.backoff.max', 'must be at least backoff.min (2000 ms)']);
    assert.deepEqual([n.field, n.rule], ['backoffMax', 'must be at least backoffMin (2000 ms)']);
  });

  it('a duration is read by one reader: the driver, the builder, the config and a Node-RED device give one rule and one hint', () => {
    const { normalizeConnectionOptions } = require('../../gateway/drivers/connection-options');
    const { NOT_A_DURATION } = require('../../gateway/base/duration-field');
    // not a duration at all
    const d = fromBuilder(() => normalizeConnectionOptions({ timeoutMs: 'soon' }, 'Modbus client', {}));
    const b = fromBuilder(() => buildDeviceSpec({ name: 'd', target: TCP, timeoutMs: 'soon' }));
    const c = fromConfig({ devices: { d: { target: TCP, timeout: 'soon' } }, jobs: [oneJob] });
    const n = fromNode(() => modbusDevice({ transport: 'tcp', host: '127.0.0.1', timeout: 'soon' }, 'd'));
    assert.equal(NOT_A_DURATION, 'is not a duration; use e.g. "500ms", "10s", "2m" or a number of milliseconds');
    assert.deepEqual([d.code, d.field, d.rule], ['NINES_ERR_INVALID_ARG', 'timeoutMs', NOT_A_DURATION]);
    assert.deepEqual([b.field, b.rule], ['timeoutMs', NOT_A_DURATION]);
    assert.deepEqual([c.path, c.rule], ['devices.d.timeout', NOT_A_DURATION]);
    assert.deepEqual([n.field, n.rule], ['timeout', NOT_A_DURATION]);
    // a duration that is no whole ms: the same wording of the range, each with its own ceiling
    const dq = fromBuilder(() => normalizeConnectionOptions({ interFrameDelayMs: '0.5ms' }, 'Modbus client', {}));
    const bq = fromBuilder(() => buildDeviceSpec({ name: 'd', target: TCP, interFrameDelayMs: '0.5ms' }));
    assert.deepEqual([dq.field, dq.rule], ['interFrameDelayMs', 'must be a whole number of ms from 0ms to 1m']);
    assert.equal(bq.rule, dq.rule);
    // and both take the same forms
    assert.equal(normalizeConnectionOptions({ timeoutMs: '1.5s' }, 'Modbus client', {}).timeoutMs, 1500);
    assert.equal(buildDeviceSpec({ name: 'd', target: TCP, timeoutMs: '1.5s' }).timeoutMs, 1500);
  });

  it('a name is one rule (base/names.js): the config, the job and unit builders and the MQTT topics refuse the same names with it', () => {
    const { NAME_RULE, isName, toName } = require('../../gateway/base/names');
    const { checkName } = require('../../gateway/runtime/mqtt/topics');
    const read = { fc: 3, address: 0, quantity: 1 };
    for (const bad of ['a/b', 'a+b', 'x'.repeat(65), '__proto__', 'with space', '']) {
      const j = fromBuilder(() => buildJobSpec({ name: bad, target: TCP, read: '3:0:1' }));
      assert.deepEqual([j.code, j.field, j.rule], ['NINES_ERR_INVALID_ARG', 'name', NAME_RULE], bad);
      const u = fromBuilder(() => buildDeviceSpec({ name: 'd', target: RTU, units: [{ name: bad, unitId: 1 }] }));
      assert.deepEqual([u.field, u.rule], ['units[0].name', NAME_RULE], bad);
      const t = fromBuilder(() => checkName(bad, 'job'));
      assert.deepEqual([t.field, t.rule], ['job', NAME_RULE], bad);
      const c = fromConfig({ devices: { d: { target: TCP } }, jobs: [{ ...oneJob, name: bad }] });
      assert.deepEqual([c.path, c.rule], ['jobs[0].name', NAME_RULE], bad);
      assert.equal(isName(bad), false);
    }
    const cu = fromConfig({ devices: { d: { target: RTU, units: { 'a/b': { unitId: 1 } } } }, jobs: [{ ...oneJob, unit: 'a/b', read }] });
    assert.deepEqual([cu.path, cu.rule], ['devices.d.units["a/b"].name', NAME_RULE]);
    // the longest name is taken everywhere
    const longest = 'x'.repeat(64);
    assert.equal(buildJobSpec({ name: longest, target: TCP, read: '3:0:1' }).name, longest);
    assert.equal(buildDeviceSpec({ name: 'd', target: RTU, units: [{ name: longest, unitId: 1 }] }).units[0].name, longest);
    assert.equal(checkName(longest, 'job'), longest);
    // a name made from a Node-RED node id (the poll node's job key) is always a valid one
    const key = jobKey('a1b2:c3/d4 ' + 'y'.repeat(80));
    assert.deepEqual([key.length, isName(key), key.slice(0, 16)], [64, true, 'poll-a1b2_c3_d4_']);
    assert.equal(toName('a b', '-'), 'a-b');
  });

  it('a scan\'s timeout, quiet period, budget and cap: its limits in commission/defaults.js, read by the shared readers', () => {
    const { normalizeScanOptions } = require('../../gateway/commission/scan');
    const SD = require('../../gateway/commission/defaults');
    const { readDuration } = require('../../gateway/base/duration-field');
    const ruleOf = (v, lo, hi) => fromBuilder(() => readDuration(v, 'x', { lo, hi })).rule;
    const t = fromBuilder(() => normalizeScanOptions({ timeoutMs: SD.SCAN_MAX_TIMEOUT_MS + 1 }));
    assert.deepEqual([t.code, t.field, t.rule], ['NINES_ERR_INVALID_ARG', 'timeout', 'must be a whole number of ms from 1ms to 1m']);
    assert.equal(t.rule, ruleOf(SD.SCAN_MAX_TIMEOUT_MS + 1, 1, SD.SCAN_MAX_TIMEOUT_MS));
    const q = fromBuilder(() => normalizeScanOptions({ quietMs: 'soon' }));
    assert.deepEqual([q.field, q.rule], ['quiet', ruleOf('soon', 0, 1)]);
    const b = fromBuilder(() => normalizeScanOptions({ requestsPerUnit: SD.SCAN_MAX_REQUESTS_PER_UNIT + 1 }));
    assert.deepEqual([b.field, b.rule], ['budget', `must be an integer from 1 to ${SD.SCAN_MAX_REQUESTS_PER_UNIT}`]);
    const m = fromBuilder(() => normalizeScanOptions({ maxDurationMs: SD.SCAN_MAX_DURATION_LIMIT_MS + 1 }));
    assert.deepEqual([m.field, m.rule], ['maxDuration', 'must be a whole number of ms from 1ms to 24h']);
    // at the limits, and in the forms every duration takes
    const o = normalizeScanOptions({ timeoutMs: '1m', quietMs: 0, requestsPerUnit: SD.SCAN_MAX_REQUESTS_PER_UNIT, maxDurationMs: '24h' });
    assert.deepEqual([o.timeoutMs, o.quietMs, o.requestsPerUnit, o.maxDurationMs], [SD.SCAN_MAX_TIMEOUT_MS, 0, SD.SCAN_MAX_REQUESTS_PER_UNIT, SD.SCAN_MAX_DURATION_LIMIT_MS]);
    assert.equal(normalizeScanOptions({ timeoutMs: '50ms' }).quietMs, 50, 'the quiet period follows the timeout read');
  });

  it('a unit\'s read limits are its device\'s (devices/limits.js), and the config states the device and job limits from their owners', () => {
    const over = DL.MAX_REGISTERS_PER_REQUEST + 1;
    const d = fromBuilder(() => buildDeviceSpec({ name: 'd', target: RTU, maxRegistersPerRequest: over }));
    const u = fromBuilder(() => buildDeviceSpec({ name: 'd', target: RTU, units: [{ name: 'm1', unitId: 1, maxRegistersPerRequest: over }] }));
    assert.deepEqual([d.rule, u.field, u.rule], [`must be an integer from 1 to ${DL.MAX_REGISTERS_PER_REQUEST}`, 'units[0].maxRegistersPerRequest', d.rule]);
    const bits = fromBuilder(() => buildDeviceSpec({ name: 'd', target: RTU, units: [{ name: 'm1', unitId: 1, maxBitsPerRequest: DL.MAX_BITS_PER_REQUEST + 1 }] }));
    assert.equal(bits.rule, `must be an integer from 1 to ${DL.MAX_BITS_PER_REQUEST}`);
    // the config's schema states the builders' limits, not copies of them
    const JL = require('../../gateway/jobs/limits');
    const q = fromConfig({ devices: { d: { target: TCP, queue: DL.MAX_QUEUE + 1 } }, jobs: [oneJob] });
    assert.match(q.rule, new RegExp(`^must be an integer from 1 to ${DL.MAX_QUEUE} `));
    const c = fromConfig({ devices: { d: { target: TCP, maxConnections: DL.MAX_CONNECTIONS + 1 } }, jobs: [oneJob] });
    assert.match(c.rule, new RegExp(`^must be an integer from 1 to ${DL.MAX_CONNECTIONS} `));
    const j = fromConfig({ devices: { d: { target: TCP } }, jobs: [{ ...oneJob, connections: JL.MAX_CONNECTIONS + 1 }] });
    assert.equal(j.rule, `must be an integer from 1 to ${JL.MAX_CONNECTIONS}`);
    const defaults = require('../../gateway/runtime/config/defaults');
    for (const alias of ['DEVICE_QUEUE_LIMIT', 'DEVICE_MAX_CONNECTIONS_LIMIT', 'DEVICE_MAX_INFLIGHT_LIMIT', 'JOB_MAX_CONNECTIONS', 'CATCH_UP_POLICIES', 'PRECISIONS', 'VALUES_MODES', 'GATEWAY_INTERVAL_MS', 'NAME_PATTERN']) {
      assert.equal(defaults[alias], undefined, `${alias} is read from its owner`);
    }
  });

  it('a line quirk delay above the driver\'s ceiling is refused with one rule', () => {
    const over = MAX_QUIRK_DELAY_MS + 1;
    const b = fromBuilder(() => buildDeviceSpec({ name: 'd', target: TCP, delayAfterConnectMs: over }));
    assert.match(b.rule, /from 0ms to 1m$/);
    assert.equal(fromConfig({ devices: { d: { target: TCP, delayAfterConnect: over } }, jobs: [oneJob] }).rule, b.rule);
    assert.equal(fromNode(() => modbusDevice({ transport: 'tcp', host: '127.0.0.1', delayAfterConnect: over }, 'd')).rule, b.rule);
  });

  it('a serial line is one connection: the line module\'s rule in the config and in Node-RED', () => {
    const b = fromBuilder(() => buildDeviceSpec({ name: 'd', target: RTU, maxConnections: 2 }));
    const c = fromConfig({ devices: { d: { target: RTU, maxConnections: 2 } }, jobs: [oneJob] });
    const n = fromNode(() => modbusDevice({ transport: 'rtu', path: '/dev/ttyUSB0', maxConnections: '2' }, 'd'));
    assert.deepEqual([c.path, c.rule], ['devices.d.maxConnections', b.rule]);
    assert.deepEqual([n.field, n.rule], ['maxConnections', b.rule]);
  });

  it('a unit id outside a serial line\'s range (1-247) is refused by the builder, the config and the Node-RED unit list', () => {
    const b = fromBuilder(() => buildDeviceSpec({ name: 'd', target: RTU, units: [{ name: 'm0', unitId: 0 }] }));
    const c = fromConfig({ devices: { d: { target: RTU, units: { m0: { unitId: 0 } } } }, jobs: [{ ...oneJob, unit: 'm0' }] });
    const n = fromNode(() => modbusDevice({ transport: 'rtu', path: '/dev/ttyUSB0', unitId: 1, units: '0-3' }, 'd'));
    assert.deepEqual([b.field, c.path, n.field], ['units[0].unitId', 'devices.d.units.m0.unitId', 'units']);
    assert.match(b.rule, /from 1 to 247 on a serial line/);
    assert.equal(c.rule, b.rule);
    assert.match(n.message, /unit ids are 1-247 on a serial line/);
  });

  it('a rate out of range: parseRate\'s rule through the builder, from the config, a poll node and a CLI flag', () => {
    const b = fromBuilder(() => buildJobSpec({ name: 'j', target: TCP, read: '3:0:1', ratePerSec: '2000000/s' }));
    assert.deepEqual([b.code, b.field, b.rule], ['NINES_ERR_INVALID_ARG', 'ratePerSec', 'must be more than 0 and at most 1000000/s']);
    const c = fromConfig({ devices: { d: { target: TCP } }, jobs: [{ ...oneJob, rate: '2000000/s' }] });
    assert.deepEqual([c.path, c.rule], ['jobs[0].rate', b.rule]);
    const { spec, target, timeoutMs } = asciiDevice({ host: '127.0.0.1' }, 'ad');
    const RED = { nodes: { getNode: () => ({ spec, target: target.url, timeoutMs, configError: null }) } };
    const n = fromNode(() => pollSettings(RED, { protocol: 'ascii', asciiDevice: 'ad', command: '@01', rate: '2000000/s' }, 'p'));
    assert.deepEqual([n.field, n.rule], ['rate', b.rule]);
    const f = fromBuilder(() => flagErrors(() => runProbe({ target: TCP, read: '3:0:1', count: 1, ratePerSec: '2000000/s' }), { ratePerSec: '--rate' }));
    assert.deepEqual([f.field, f.rule], ['--rate', b.rule]);
    assert.match(f.message, /^--rate must be/);
  });

  it('parseRate says whether a refused rate is out of range or no rate at all, and the config reads that, not the rule\'s text', () => {
    const { parseRate, RATE_HINT } = require('../../gateway/base/quantities');
    const over = fromBuilder(() => parseRate('2000000/s'));
    assert.deepEqual([over.code, over.rule], ['NINES_ERR_INVALID_ARG', 'must be more than 0 and at most 1000000/s']);
    for (const [v, outOfRange] of [['2000000/s', true], [0, true], ['-5/s', true], ['often', false], ['10/fortnight', false]]) {
      let err;
      try { parseRate(v); } catch (e) { err = e; }
      assert.equal(err.details.outOfRange, outOfRange, String(v));
      if (!outOfRange) assert.equal(err.details.rule, `is not a rate; ${RATE_HINT}`);
    }
    // where "max" is not for the field (a value's maxRate), a misspelt rate gets that field's hint; one out of range parseRate's rule
    const bad = fromConfig({ devices: { d: { target: TCP } }, jobs: [{ ...oneJob, values: { mode: 'on-change', maxRate: 'often' } }] });
    assert.deepEqual([bad.path, bad.rule], ['jobs[0].values.maxRate', 'is not a rate; use e.g. "10/s" or "1/min"']);
    const high = fromConfig({ devices: { d: { target: TCP } }, jobs: [{ ...oneJob, values: { mode: 'on-change', maxRate: '2000000/s' } }] });
    assert.deepEqual([high.path, high.rule], ['jobs[0].values.maxRate', over.rule]);
    const job = fromConfig({ devices: { d: { target: TCP } }, jobs: [{ ...oneJob, rate: 'often' }] });
    assert.deepEqual([job.path, job.rule], ['jobs[0].rate', `is not a rate; ${RATE_HINT}`]);
  });

  it('one default rate (closed loop) for every job that names none', () => {
    assert.equal(buildJobSpec({ name: 'j', target: TCP, read: '3:0:1' }).ratePerSec, Infinity);
    assert.equal(buildJobSpec({ name: 'j', target: TCP, read: '3:0:1' }, { purpose: 'measure' }).ratePerSec, Infinity);
  });

  it('a write job must skip: one rule, in the builder, reported by the config at catchUp', () => {
    const b = fromBuilder(() => buildJobSpec({ name: 'w', target: TCP, write: '6:0=1', ratePerSec: 1, policy: 'capped' }));
    const c = fromConfig({ devices: { d: { target: TCP, allowWrites: true } }, jobs: [{ name: 'w', device: 'd', write: { fc: 6, address: 0, value: 1 }, rate: '1/s', catchUp: 'capped' }] });
    assert.deepEqual([b.field, c.path, c.rule], ['policy', 'jobs[0].catchUp', b.rule]);
  });

  it('the device dialogs\' editor checks state the limits of devices/limits.js', () => {
    for (const file of ['nines-ascii-device.html', 'nines-modbus-device.html']) {
      const html = fs.readFileSync(path.join(__dirname, '..', '..', 'nodes', file), 'utf8');
      for (const field of ['timeout', 'connectTimeout', 'backoffMin']) {
        const m = new RegExp(`\\b${field}: \\{[^}]*intIn\\(1, (\\d+)\\)`).exec(html);
        assert.ok(m, `${file} checks ${field}`);
        assert.equal(Number(m[1]), DL.MAX_DURATION_MS, `${file} ${field}`);
      }
    }
    const modbus = fs.readFileSync(path.join(__dirname, '..', '..', 'nodes', 'nines-modbus-device.html'), 'utf8');
    assert.equal(Number(/intIn\(0, (\d+)\)/.exec(modbus)[1]), DL.MAX_QUIRK_DELAY_MS);
  });
});
