'use strict';

const assert = require('node:assert/strict');
const { buildDeviceSpec, Device } = require('../../gateway/devices');
const { isBuiltDeviceSpec, trustDeviceSpec } = require('../../gateway/devices/spec');
const { parseTarget } = require('../../gateway/drivers/target');
const { NinesError } = require('../../gateway/base/errors');
const C = require('../../gateway/base/constants');

const TARGET = 'modbus+tcp://127.0.0.1:5020?unitId=1';

/** Asserts fn throws a NinesError with `code` whose details name `field`. */
function assertRejected (fn, field, code = 'NINES_ERR_INVALID_ARG') {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof NinesError, `expected a NinesError, got ${err && err.name}`);
    assert.equal(err.code, code);
    if (field !== undefined) {
      assert.equal(err.details.field, field);
      assert.ok(err.message.includes(field), `message names ${field}: ${err.message}`);
    }
    return true;
  });
}

describe('buildDeviceSpec', function () {
  it('calls the device by its label in messages, its name by default (issue 21: Node-RED names a device by a node id)', async function () {
    const { Device } = require('../../gateway/devices/device');
    assert.equal(buildDeviceSpec({ name: 'n1', target: TARGET }).label, 'n1');
    assert.throws(() => buildDeviceSpec({ name: 'n1', label: '', target: TARGET }), { code: 'NINES_ERR_INVALID_ARG' });
    const d = new Device({ name: '17e3c9d4de822a6b', label: 'Line 3 PLC', target: 'modbus+tcp://127.0.0.1:1?unitId=1', timeoutMs: 50, connectTimeoutMs: 50 });
    await d.close();
    const err = await d.user('poll').request({ fc: 3, address: 0, quantity: 1 }).catch((e) => e);
    assert.match(err.message, /device "Line 3 PLC"/);
    assert.doesNotMatch(err.message, /17e3c9d4de822a6b/);
  });

  it('fills every default from the constants', function () {
    const spec = buildDeviceSpec({ name: 'plc1', target: TARGET });
    assert.deepEqual(spec, {
      name: 'plc1',
      label: 'plc1',
      target: parseTarget(TARGET),
      maxConnections: 1,
      maxInflight: 1,
      timeoutMs: C.DEFAULT_TIMEOUT_MS,
      connectTimeoutMs: C.DEFAULT_CONNECT_TIMEOUT_MS,
      backoff: { initialMs: C.BACKOFF_INITIAL_MS, maxMs: C.BACKOFF_MAX_MS },
      queueMax: C.DEFAULT_QUEUE_MAX,
      maxGap: 16,
      maxRegistersPerRequest: C.MODBUS_MAX_READ_REGISTERS,
      maxBitsPerRequest: C.MODBUS_MAX_READ_BITS,
      addressBase: 0,
      order: 'ABCD',
      unsupportedFunctionCodes: [],
      interFrameDelayMs: 0,
      delayAfterConnectMs: 0,
      diagnosticsMs: 0,
      units: null,
      tls: null
    });
  });

  it('takes the line quirks: a pause between frames and after a connect, never negative', () => {
    const spec = buildDeviceSpec({ name: 'd', target: TARGET, interFrameDelayMs: '5ms', delayAfterConnectMs: 200 });
    assert.deepEqual([spec.interFrameDelayMs, spec.delayAfterConnectMs], [5, 200]);
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, interFrameDelayMs: -1 }), 'interFrameDelayMs');
    // a request waits the pause out inside its timeout; a device that needs it takes one request at a time
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, timeoutMs: 100, interFrameDelayMs: 100 }), 'interFrameDelayMs');
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, maxInflight: 2, interFrameDelayMs: 5 }), 'interFrameDelayMs');
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, delayAfterConnectMs: 60001 }), 'delayAfterConnectMs');
  });

  it('builds the units of a line, each with its unit id, backoff and quirks, inheriting the line\'s', () => {
    const spec = buildDeviceSpec({
      name: 'bus', target: 'modbus+rtu:///dev/ttyUSB0', order: 'CDAB', backoff: { initialMs: 50, maxMs: 500 },
      units: [{ name: 'm1', unitId: 1 }, { name: 'm2', unitId: 2, order: 'ABCD', maxRegistersPerRequest: 32, backoff: { initialMs: 1000, maxMs: 5000 } }]
    });
    // a unit's backoff is its own (default 1 s to 10 s: probing a silent unit holds the line), not the line's reconnect backoff
    assert.deepEqual(spec.units.map((u) => [u.name, u.unitId, u.order, u.maxRegistersPerRequest, u.backoff.initialMs, u.backoff.maxMs]), [['m1', 1, 'CDAB', 125, 1000, 10000], ['m2', 2, 'ABCD', 32, 1000, 5000]]);
    assert.deepEqual(buildDeviceSpec(structuredClone(spec)), spec);
    const rtu = (units) => () => buildDeviceSpec({ name: 'bus', target: 'modbus+rtu:///dev/ttyUSB0', units });
    assertRejected(rtu([{ name: 'x', unitId: 0 }]), 'units[0].unitId');
    assertRejected(rtu([{ name: 'x', unitId: 248 }]), 'units[0].unitId');
    assertRejected(rtu([{ name: 'x', unitId: 1 }, { name: 'y', unitId: 1 }]), 'units[1].unitId');
    assertRejected(rtu([{ name: 'x', unitId: 1 }, { name: 'x', unitId: 2 }]), 'units[1].name');
    assertRejected(rtu([{ name: 'x', unitId: 1, colour: 'red' }]), 'units[0].colour');
    assertRejected(rtu([]), 'units');
    assert.equal(buildDeviceSpec({ name: 'gw', target: TARGET, units: [{ name: 'self', unitId: 255 }] }).units[0].unitId, 255);
    assertRejected(() => buildDeviceSpec({ name: 'gw', target: 'ascii://127.0.0.1:9500', units: [{ name: 'x', unitId: 1 }] }), 'units');
  });

  it('takes the quirks of a device: counting from 1, its word order, the write function codes it lacks', () => {
    const spec = buildDeviceSpec({ name: 'd', target: TARGET, addressBase: 1, order: 'CDAB', unsupportedFunctionCodes: [16, 15, 16] });
    assert.deepEqual([spec.addressBase, spec.order, spec.unsupportedFunctionCodes], [1, 'CDAB', [15, 16]]);
    assert.equal(buildDeviceSpec(structuredClone(spec)).order, 'CDAB');
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, addressBase: 2 }), 'addressBase');
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, order: 'ACBD' }), 'order');
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, unsupportedFunctionCodes: [3] }), 'unsupportedFunctionCodes');
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, unsupportedFunctionCodes: [6, 16] }), 'unsupportedFunctionCodes');
  });

  it('takes maxInflight above 1 on Modbus TCP only: RTU and ASCII have no transaction id to match replies by', function () {
    assert.equal(buildDeviceSpec({ name: 'd', target: TARGET, maxInflight: 8 }).maxInflight, 8);
    assertRejected(() => buildDeviceSpec({ name: 'd', target: 'modbus+rtu:///dev/ttyUSB0', maxInflight: 2 }), 'maxInflight');
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, maxInflight: 65 }), 'maxInflight');
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, maxInflight: 0 }), 'maxInflight');
  });

  it('refuses the Modbus request-shaping fields on an ASCII device, and out-of-protocol limits', function () {
    for (const key of ['maxInflight', 'maxGap', 'maxRegistersPerRequest', 'maxBitsPerRequest', 'addressBase']) {
      assertRejected(() => buildDeviceSpec({ name: 'd', target: 'ascii://127.0.0.1:9500', [key]: key === 'addressBase' ? 1 : 2 }), key);
    }
    assertRejected(() => buildDeviceSpec({ name: 'd', target: 'ascii://127.0.0.1:9500', order: 'CDAB' }), 'order');
    assertRejected(() => buildDeviceSpec({ name: 'd', target: 'ascii://127.0.0.1:9500', unsupportedFunctionCodes: [16] }), 'unsupportedFunctionCodes');
    // an ASCII spec, built, passes again as it is (a worker rebuilds what it is sent)
    const built = buildDeviceSpec({ name: 'd', target: 'ascii://127.0.0.1:9500' });
    assert.deepEqual(buildDeviceSpec(structuredClone(built)), built);
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, maxRegistersPerRequest: 126 }), 'maxRegistersPerRequest');
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, maxBitsPerRequest: 2001 }), 'maxBitsPerRequest');
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, maxGap: -1 }), 'maxGap');
    const spec = buildDeviceSpec({ name: 'd', target: TARGET, maxGap: 0, maxRegistersPerRequest: 32, maxBitsPerRequest: 256 });
    assert.deepEqual([spec.maxGap, spec.maxRegistersPerRequest, spec.maxBitsPerRequest], [0, 32, 256]);
  });

  it('accepts a parsed target and keeps that very object', function () {
    const target = parseTarget('ascii://127.0.0.1:9500?address=02');
    const spec = buildDeviceSpec({ name: 'ed588', target, maxConnections: 8 });
    assert.equal(spec.target, target);
    assert.equal(spec.maxConnections, 8);
  });

  it('reads durations given as strings such as "500ms" and "2s"', function () {
    const spec = buildDeviceSpec({ name: 'd', target: TARGET, timeoutMs: '500ms', connectTimeoutMs: '2s', backoff: { initialMs: '50ms', maxMs: '1s' } });
    assert.equal(spec.timeoutMs, 500);
    assert.equal(spec.connectTimeoutMs, 2000);
    assert.deepEqual(spec.backoff, { initialMs: 50, maxMs: 1000 });
  });

  it('raises the default backoff cap to an initial delay above it', function () {
    assert.deepEqual(buildDeviceSpec({ name: 'd', target: TARGET, backoff: { initialMs: 20000 } }).backoff, { initialMs: 20000, maxMs: 20000 });
  });

  it('returns a spec that is already built as is, also after it crossed a thread boundary and was trusted there', function () {
    const spec = buildDeviceSpec({ name: 'd', target: TARGET, maxConnections: 4, backoff: { initialMs: 10, maxMs: 100 } });
    assert.equal(buildDeviceSpec(spec), spec);
    assert.equal(isBuiltDeviceSpec(spec), true);
    // postMessage uses the structured clone: the copy is plain data; built again it is the same spec,
    // and once the worker that receives it from the pool trusts it, it is taken as it is
    const copy = structuredClone(spec);
    assert.deepEqual(copy, spec);
    assert.equal(isBuiltDeviceSpec(copy), false);
    assert.deepEqual(buildDeviceSpec(copy), spec);
    assert.equal(buildDeviceSpec(trustDeviceSpec(copy)), copy);
    // raw input that looks like a spec is not taken for one
    assert.equal(isBuiltDeviceSpec({ ...spec }), false);
  });

  it('rejects maxConnections outside 1-64 or not an integer, naming the field', function () {
    for (const v of [0, -1, 65, 1.5, '2', null]) assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, maxConnections: v }), 'maxConnections');
  });

  it('rejects more than one connection to a serial line', function () {
    assertRejected(() => buildDeviceSpec({ name: 'd', target: 'modbus+rtu:///dev/ttyUSB0', maxConnections: 2 }), 'maxConnections');
    assert.equal(buildDeviceSpec({ name: 'd', target: 'modbus+rtu:///dev/ttyUSB0' }).maxConnections, 1);
    // a serial server's port is one line too: its replies would reach every client
    assertRejected(() => buildDeviceSpec({ name: 'd', target: 'modbus+rtutcp://10.0.0.9:4001', maxConnections: 2 }), 'maxConnections');
    assert.equal(buildDeviceSpec({ name: 'd', target: 'modbus+rtutcp://10.0.0.9:4001' }).maxConnections, 1);
  });

  it('rejects a negative, zero or inverted backoff, naming the field', function () {
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, backoff: { initialMs: -5 } }), 'backoff.initialMs');
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, backoff: { initialMs: 0 } }), 'backoff.initialMs');
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, backoff: { initialMs: 500, maxMs: 100 } }), 'backoff.maxMs');
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, backoff: { initial: 5 } }), 'backoff.initial');
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, backoff: 100 }), 'backoff');
  });

  it('rejects unknown keys, so a typo never runs with the default', function () {
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, timeout: 500 }), 'timeout');
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, maxconnections: 2 }), 'maxconnections');
  });

  it('rejects a missing or empty name, and a missing target', function () {
    assertRejected(() => buildDeviceSpec({ target: TARGET }), 'name');
    assertRejected(() => buildDeviceSpec({ name: '  ', target: TARGET }), 'name');
    assertRejected(() => buildDeviceSpec({ name: 'd' }), 'target');
    assertRejected(() => buildDeviceSpec(null), 'device');
    assertRejected(() => buildDeviceSpec('plc1'), 'device');
  });

  it('rejects a bad target with NINES_ERR_INVALID_TARGET', function () {
    for (const t of ['http://127.0.0.1', 'modbus+tcp://127.0.0.1:502?unit=1', 'ascii://', 42]) {
      assertRejected(() => buildDeviceSpec({ name: 'd', target: t }), undefined, 'NINES_ERR_INVALID_TARGET');
    }
  });

  it('rejects bad timeouts and queue bounds, naming the field', function () {
    for (const v of [0, -1, 1.5, 'soon', 2 ** 31]) assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, timeoutMs: v }), 'timeoutMs');
    assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, connectTimeoutMs: 0 }), 'connectTimeoutMs');
    for (const v of [0, 100001, 2.5]) assertRejected(() => buildDeviceSpec({ name: 'd', target: TARGET, queueMax: v }), 'queueMax');
  });

  it('lets a Device with a bad spec fail before any client is made, so nothing is sent', function () {
    let made = 0;
    const createClient = () => { made++; throw new Error('must not be called'); };
    assertRejected(() => new Device({ name: 'd', target: TARGET, maxConnections: 0 }, { createClient }), 'maxConnections');
    assert.equal(made, 0);
  });

  it('a job\'s unit is refused with a message made whole where it is made: the job\'s field, not the device\'s', () => {
    const { resolveUnit } = require('../../gateway/devices/line');
    const line = buildDeviceSpec({ name: 'bus', target: 'modbus+rtu:///dev/ttyUSB0?baudRate=9600', units: [{ name: 'm1', unitId: 1 }, { name: 'm2', unitId: 2 }] });
    const single = buildDeviceSpec({ name: 'plc', target: TARGET });
    const cases = [
      [undefined, line, 'unit is required: device "bus" is a line of units (m1, m2); got nothing'],
      ['m9', line, 'unit is not a unit of device "bus"; units: m1, m2; got "m9"'],
      ['m1', single, 'unit names a unit, but device "plc" is not a line of units (devices.plc.units); got "m1"'],
      ['m1', undefined, 'unit needs a device that is a line of units; got "m1"']
    ];
    for (const [name, device, message] of cases) {
      assert.throws(() => resolveUnit(name, device), (err) => {
        assert.deepEqual([err.code, err.message, err.details.field, err.details.value], ['NINES_ERR_INVALID_ARG', message, 'unit', name]);
        assert.equal(message, `unit ${err.details.rule}; got ${name === undefined ? 'nothing' : JSON.stringify(name)}`);
        return true;
      });
    }
    assert.equal(resolveUnit('m2', line).unitId, 2);
    assert.equal(resolveUnit(undefined, single), null);
  });
});
