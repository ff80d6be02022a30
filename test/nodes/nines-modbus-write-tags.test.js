'use strict';

/**
 * nines-modbus-write with a tag list: msg.payload {tag: value} encoded by each tag's type, scale
 * and order, written in the order given, each tag's outcome in msg.results; a value a tag cannot
 * hold (3.7 for an int16, 40000 for an int16, a fraction on a scaled integer) refuses the whole msg
 * with NINES_ERR_INVALID_VALUE, and nothing reaches the device.
 */

const assert = require('node:assert/strict');
const { helper, roundTrip, expectError, withModbusSim } = require('./harness');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const deviceNode = require('../../nodes/nines-modbus-device');
const writeNode = require('../../nodes/nines-modbus-write');

const TAGS = [
  { name: 'setpoint', table: 'holding', address: 10, type: 'float32', order: 'CDAB' },
  { name: 'speed', table: 'holding', address: 12, type: 'int16' },
  { name: 'level', table: 'holding', address: 13, type: 'uint16', scale: 0.1 },
  { name: 'pump_on', table: 'coil', address: 3 },
  { name: 'label', table: 'holding', address: 14, type: 'string', length: 2 },
  { name: 'running', table: 'discrete', address: 0 },
  { name: 'alarm', table: 'holding', address: 20, type: 'bit', bit: 3 },
  { name: 'mode', table: 'holding', address: 20, type: 'bits', bit: '8-11' }
];

function flow (port, write = {}, device = {}) {
  return [
    { id: 'dev', type: 'nines-modbus-device', transport: 'tcp', host: '127.0.0.1', port, unitId: 1, timeout: 300, allowWrites: true, ...device },
    { id: 'w', type: 'nines-modbus-write', device: 'dev', source: 'tags', tags: TAGS, wires: [['out']], ...write },
    { id: 'out', type: 'helper' }
  ];
}

describe('nines-modbus-write with a tag list', function () {
  let sim;
  withModbusSim(() => sim, (s) => { sim = s; });

  it('writes named values, each encoded by its tag, and says how each went', async () => {
    await helper.load([deviceNode, writeNode], flow(sim.port));
    const msg = await roundTrip(helper.getNode('w'), helper.getNode('out'), { payload: { setpoint: 123.456, speed: -2, level: 12.3, pump_on: true, label: 'OK' } });
    const hr = sim.model.banks.holdingRegisters;
    assert.deepEqual([hr[10], hr[11]], [0xE979, 0x42F6], 'float32 in CDAB');
    assert.equal(hr[12], 0xFFFE);
    assert.equal(hr[13], 123, '12.3 at scale 0.1');
    assert.deepEqual([hr[14], hr[15]], [0x4F4B, 0]);
    assert.equal(sim.model.banks.coils[3], 1);
    assert.deepEqual(msg.results, { setpoint: { ok: true }, speed: { ok: true }, level: { ok: true }, pump_on: { ok: true }, label: { ok: true } });
    assert.equal(typeof msg.latency, 'number');
  });

  for (const [what, payload, code, re] of [
    ['3.7 for an int16', { speed: 3.7 }, 'NINES_ERR_INVALID_VALUE', /speed.*3\.7/],
    ['40000 for an int16', { speed: 40000 }, 'NINES_ERR_INVALID_VALUE', /speed/],
    ['a value between two steps of a scaled register', { level: 12.34 }, 'NINES_ERR_INVALID_VALUE', /level/],
    ['text for a number', { setpoint: 'warm' }, 'NINES_ERR_INVALID_VALUE', /setpoint/],
    ['a string longer than its tag', { label: 'TOOLONG' }, 'NINES_ERR_INVALID_VALUE', /label/],
    // nothing is coerced (issue 18): hex and exponent text, booleans for numbers, text for a coil
    ['hex text for an int16', { speed: '0x10' }, 'NINES_ERR_INVALID_VALUE', /speed.*got "0x10"/],
    ['exponent text for an int16', { speed: '1e3' }, 'NINES_ERR_INVALID_VALUE', /speed.*got "1e3"/],
    ['true for an int16', { speed: true }, 'NINES_ERR_INVALID_VALUE', /speed.*got true/],
    ['"on" for a coil', { pump_on: 'on' }, 'NINES_ERR_INVALID_VALUE', /pump_on.*got "on"/],
    ['1e-50 for a float32 (it would be stored as 0)', { setpoint: 1e-50 }, 'NINES_ERR_INVALID_VALUE', /setpoint.*1e-50.*stored as 0/],
    ['Infinity for a float32', { setpoint: Infinity }, 'NINES_ERR_INVALID_VALUE', /setpoint.*got Infinity/],
    ['a read-only tag', { running: true }, 'NINES_ERR_INVALID_ARG', /running.*read-only/],
    ['an unknown tag', { Speed: 1 }, 'NINES_ERR_INVALID_ARG', /did you mean "speed"/],
    ['a payload that is not an object', 5, 'NINES_ERR_INVALID_ARG', /object of tag names/]
  ]) {
    it(`refuses ${what} (${code}) and writes nothing, not even the good values of the msg`, async () => {
      await helper.load([deviceNode, writeNode], flow(sim.port));
      const w = helper.getNode('w');
      const body = typeof payload === 'object' ? { pump_on: true, setpoint: 1, ...payload } : payload;
      const err = await expectError(w, { payload: body });
      assert.equal(err.code, code);
      assert.match(err.message, re);
      assert.equal(sim.stats.requests, 0, 'nothing sent');
      assert.equal(sim.model.banks.coils[3], 0);
      assert.deepEqual([...sim.model.banks.holdingRegisters.slice(10, 16)], [0, 0, 0, 0, 0, 0]);
      // the node stays healthy
      await roundTrip(w, helper.getNode('out'), { payload: { speed: 4 } });
      assert.equal(sim.model.banks.holdingRegisters[12], 4);
    });
  }

  it('sends the msg with each tag\'s outcome, reports the one the device refused, and sends none after it', async () => {
    await sim.close();
    sim = await createModbusTcpSimulator({ port: 0, modelOptions: { holes: { holdingRegisters: [[12, 12]] } } });
    await helper.load([deviceNode, writeNode], flow(sim.port));
    const w = helper.getNode('w');
    const out = new Promise((resolve) => helper.getNode('out').once('input', resolve));
    const err = await expectError(w, { payload: { pump_on: true, speed: 1, level: 2 } });
    const msg = await out;
    assert.equal(err.code, 'NINES_ERR_MODBUS_EXCEPTION');
    assert.deepEqual(err.details.tags, ['speed']);
    assert.deepEqual(err.details.skipped, ['level']);
    assert.equal(msg.results.pump_on.ok, true);
    assert.equal(msg.results.speed.code, 'NINES_ERR_MODBUS_EXCEPTION');
    // the writes after a refused one are not sent: order carries meaning
    assert.deepEqual(msg.results.level, { ok: false, skipped: true, message: 'not sent: the write of tag "speed" before it failed' });
    assert.notEqual(sim.model.banks.holdingRegisters[13], 20);
  });

  it('writes a bit and a bit field of a register with FC22: its other bits stay as they were', async () => {
    await helper.load([deviceNode, writeNode], flow(sim.port));
    const hr = sim.model.banks.holdingRegisters;
    hr[20] = 0xF0F0;
    const msg = await roundTrip(helper.getNode('w'), helper.getNode('out'), { payload: { alarm: true, mode: 5 } });
    assert.deepEqual(msg.results, { alarm: { ok: true }, mode: { ok: true } });
    assert.equal(hr[20], 0xF5F8);
    await roundTrip(helper.getNode('w'), helper.getNode('out'), { payload: { alarm: false } });
    assert.equal(hr[20], 0xF5F0);
  });

  it('on a device that lacks FC22 a bit write fails coded, not written, and nothing writes the whole register', async () => {
    await sim.close();
    sim = await createModbusTcpSimulator({ port: 0, modelOptions: { lacks: [22] } });
    sim.model.banks.holdingRegisters[20] = 0xF0F0;
    await helper.load([deviceNode, writeNode], flow(sim.port));
    const out = new Promise((resolve) => helper.getNode('out').once('input', resolve));
    const err = await expectError(helper.getNode('w'), { payload: { alarm: true } });
    const msg = await out;
    assert.equal(err.code, 'NINES_ERR_FC_UNSUPPORTED');
    assert.deepEqual([msg.results.alarm.code, msg.results.alarm.written], ['NINES_ERR_FC_UNSUPPORTED', false]);
    assert.equal(sim.model.banks.holdingRegisters[20], 0xF0F0);
  });

  it('refuses a bad tag list at deploy with the field, and sends nothing', async () => {
    await helper.load([deviceNode, writeNode], flow(sim.port, { tags: [{ name: 'x', table: 'holding', address: 0, type: 'int16', scale: 0 }] }));
    const err = await expectError(helper.getNode('w'), { payload: { x: 1 } });
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.equal(err.details.field, 'tags[0].scale');
    assert.equal(sim.stats.requests, 0);
  });
});
