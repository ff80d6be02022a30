'use strict';

const assert = require('node:assert/strict');
const { buildJobSpec } = require('../../gateway/jobs/spec');
const { parseTarget } = require('../../gateway/drivers/target');

const modbus = { name: 'plc1', target: parseTarget('modbus+tcp://127.0.0.1:5020?unitId=3'), maxConnections: 2 };
const ascii = { name: 'ed588', target: parseTarget('ascii://127.0.0.1:9500?address=01'), maxConnections: 1 };

function code (fn) {
  try { fn(); } catch (err) { return [err.code, err.details && err.details.field]; }
  return assert.fail('expected a coded error');
}

describe('jobs/spec: one module builds every job spec', () => {
  it('a poll job defaults to skip, one lane, a 10 s interval and values off', () => {
    const s = buildJobSpec({ name: 'hr', read: { fc: 3, address: 0, quantity: 10 }, ratePerSec: 100 }, { device: modbus });
    assert.equal(s.policy, 'skip');
    assert.equal(s.connections, 1);
    assert.equal(s.intervalMs, 10000);
    assert.deepEqual(s.values, { mode: 'off', deadband: 0, n: 1, minIntervalMs: 0 });
    assert.equal(s.device, 'plc1');
    assert.equal(s.op, 'fc3-0+10');
    assert.equal(s.label, 'hr');
  });

  it('a measurement defaults to capped, and closed loop is labelled closed', () => {
    assert.equal(buildJobSpec({ name: 'p', command: '@01', ratePerSec: 10 }, { device: ascii, purpose: 'measure' }).policy, 'capped');
    assert.equal(buildJobSpec({ name: 'p', command: '@01' }, { device: ascii }).policy, 'closed');
  });

  it('a poll job sleeps to each send and a measurement spins its last stretch, unless told (precision)', () => {
    assert.equal(buildJobSpec({ name: 'hr', read: '3:0:10', ratePerSec: 100 }, { device: modbus }).precision, 'sleep');
    assert.equal(buildJobSpec({ name: 'p', command: '@01', ratePerSec: 10 }, { device: ascii, purpose: 'measure' }).precision, 'spin');
    assert.equal(buildJobSpec({ name: 'hr', read: '3:0:10', ratePerSec: 100, precision: 'spin' }, { device: modbus }).precision, 'spin');
    assert.equal(buildJobSpec({ name: 'p', command: '@01', ratePerSec: 10, precision: 'sleep' }, { device: ascii, purpose: 'measure' }).precision, 'sleep');
  });

  for (const bad of ['exact', 'SPIN', '', 1, true, null]) {
    it(`precision ${JSON.stringify(bad)} is refused with a coded error naming the field`, () => {
      assert.deepEqual(code(() => buildJobSpec({ name: 'hr', read: '3:0:10', ratePerSec: 100, precision: bad }, { device: modbus })), ['NINES_ERR_INVALID_ARG', 'precision']);
    });
  }

  it('keeps the device\'s parsed target: it is never parsed again', () => {
    const s = buildJobSpec({ name: 'hr', read: '3:0:10', ratePerSec: 1 }, { device: modbus });
    assert.equal(s.target, modbus.target);
  });

  it('survives a trip through postMessage unchanged (plain data)', () => {
    const s = buildJobSpec({ name: 'hr', read: { fc: 3, address: 0, quantity: 4 }, ratePerSec: 5, decode: { type: 'float32' }, values: { mode: 'on-change', deadband: 0.5 } }, { device: modbus });
    assert.deepEqual(structuredClone(s), s);
  });

  it('a job cannot ask for more lanes than its device has connections', () => {
    assert.deepEqual(code(() => buildJobSpec({ name: 'hr', read: '3:0:1', ratePerSec: 1, connections: 3 }, { device: modbus })), ['NINES_ERR_INVALID_ARG', 'connections']);
    assert.equal(buildJobSpec({ name: 'hr', read: '3:0:1', ratePerSec: 1, connections: 2 }, { device: modbus }).connections, 2);
  });

  it('a job on a pipelining device may have as many lanes as the device carries requests: connections × maxInflight', () => {
    const pipelined = { ...modbus, maxInflight: 8 };
    assert.equal(buildJobSpec({ name: 'hr', read: '3:0:1', ratePerSec: 1, connections: 16 }, { device: pipelined }).connections, 16);
    assert.deepEqual(code(() => buildJobSpec({ name: 'hr', read: '3:0:1', ratePerSec: 1, connections: 17 }, { device: pipelined })), ['NINES_ERR_INVALID_ARG', 'connections']);
  });

  it('knows which operations write, and a polling write never catches up late', () => {
    assert.equal(buildJobSpec({ name: 'w', write: { fc: 6, address: 0, value: 1 }, ratePerSec: 1 }, { device: modbus }).writes, true);
    assert.equal(buildJobSpec({ name: 'w', command: '#010001', ratePerSec: 1 }, { device: ascii }).writes, true);
    assert.equal(buildJobSpec({ name: 'w', generator: '@AA(Data)', ratePerSec: 1 }, { device: ascii }).writes, true);
    assert.equal(buildJobSpec({ name: 'r', command: '@01', ratePerSec: 1 }, { device: ascii }).writes, false);
    assert.deepEqual(code(() => buildJobSpec({ name: 'w', write: '6:0=1', ratePerSec: 1, policy: 'capped' }, { device: modbus })), ['NINES_ERR_INVALID_ARG', 'policy']);
    // a measurement of a write (the vendor's latency tests set outputs) keeps its own policy
    assert.equal(buildJobSpec({ name: 'w', generator: '@AA(Data)', ratePerSec: 1, policy: 'capped' }, { device: ascii, purpose: 'measure' }).policy, 'capped');
  });

  it('refuses bad input with a coded error naming the field', () => {
    const cases = [
      [{ name: 'a/b', command: '@01' }, ascii, 'name'],
      [{ name: 'x', command: '@01', read: '3:0:1' }, ascii, 'operation'],
      [{ name: 'x', command: '@01', ratePerSec: 0 }, ascii, 'ratePerSec'],
      [{ name: 'x', command: '@01', ratePerSec: 1, policy: 'later' }, ascii, 'policy'],
      [{ name: 'x', command: '@01', count: 5, durationMs: 10 }, ascii, 'durationMs'],
      [{ name: 'x', write: { fc: 6, address: 0, value: 1 }, ratePerSec: 1, values: { mode: 'on-change' } }, modbus, 'values.mode'],
      [{ name: 'x', read: { fc: 3, address: 0, quantity: 3 }, ratePerSec: 1, decode: { type: 'float32' } }, modbus, 'decode.type'],
      [{ name: 'x', read: { fc: 1, address: 0, quantity: 3 }, ratePerSec: 1, decode: { type: 'int16' } }, modbus, 'decode']
    ];
    for (const [input, device, field] of cases) assert.deepEqual(code(() => buildJobSpec(input, { device })), ['NINES_ERR_INVALID_ARG', field], JSON.stringify(input));
  });

  it('a Modbus op on an ASCII device is refused by the driver\'s own check', () => {
    assert.throws(() => buildJobSpec({ name: 'x', read: '3:0:1', ratePerSec: 1 }, { device: ascii }), { code: 'NINES_ERR_INVALID_ARG' });
    assert.throws(() => buildJobSpec({ name: 'x', read: { fc: 3, address: 0, quantity: 200 }, ratePerSec: 1 }, { device: modbus }), { code: 'NINES_ERR_INVALID_OP' });
  });
});
