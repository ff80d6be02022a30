'use strict';

const assert = require('node:assert/strict');
const { helper, roundTrip, expectError, waitStatus, withModbusSim } = require('./harness');
const deviceNode = require('../../nodes/nines-modbus-device');
const writeNode = require('../../nodes/nines-modbus-write');

function flow (port, write = {}, device = {}) {
  return [
    { id: 'dev', type: 'nines-modbus-device', name: 'plc', transport: 'tcp', host: '127.0.0.1', port, unitId: 1, timeout: 300, allowWrites: true, ...device },
    { id: 'w', type: 'nines-modbus-write', device: 'dev', fc: 16, address: 0, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, wires: [['out']], ...write },
    { id: 'out', type: 'helper' }
  ];
}

describe('nines-modbus-write', function () {
  let sim;
  withModbusSim(() => sim, (s) => { sim = s; });

  it('encodes float32 values in CDAB order and writes them with FC 16', async () => {
    await helper.load([deviceNode, writeNode], flow(sim.port, { address: 100, dataType: 'float32', wordOrder: 'little' }));
    const msg = await roundTrip(helper.getNode('w'), helper.getNode('out'), { payload: [123.456, 10] });
    const hr = sim.model.banks.holdingRegisters;
    assert.deepEqual([hr[100], hr[101], hr[102], hr[103]], [0xE979, 0x42F6, 0x0000, 0x4120]);
    assert.deepEqual(msg.payload, [123.456, 10], 'payload unchanged');
    assert.deepEqual(msg.modbus, { fc: 16, address: 100, quantity: 4, unitId: 1, written: [0xE979, 0x42F6, 0x0000, 0x4120] });
    assert.equal(typeof msg.latency, 'number');
  });

  it('writes one coil (FC 5), several coils (FC 15) and one scaled int16 register (FC 6)', async () => {
    await helper.load([deviceNode, writeNode], flow(sim.port, { dataType: 'int16', scale: 0.1 }));
    const w = helper.getNode('w');
    const out = helper.getNode('out');
    await roundTrip(w, out, { fc: 5, address: 3, payload: 1 });
    await roundTrip(w, out, { fc: 15, address: 8, payload: [true, 0, 1] });
    await roundTrip(w, out, { fc: 6, address: 7, payload: -1.5 });
    const { coils, holdingRegisters } = sim.model.banks;
    assert.equal(coils[3], 1);
    assert.deepEqual([coils[8], coils[9], coils[10]], [1, 0, 1]);
    assert.equal(holdingRegisters[7], 0xFFF1); // -15 as int16
  });

  it('refuses to write while the device config does not allow writes, and sends nothing', async () => {
    await helper.load([deviceNode, writeNode], flow(sim.port, {}, { allowWrites: false }));
    const w = helper.getNode('w');
    await waitStatus(w, (s) => s.text === 'nines-modbus-write.status.writes-off', 'writes off');
    const err = await expectError(w, { payload: [1, 2] });
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.equal(err.details.field, 'allowWrites');
    assert.equal(sim.stats.requests, 0);
    assert.equal(sim.model.banks.holdingRegisters[0], 0);
  });

  describe('bad msgs get a coded error and the node stays healthy', () => {
    beforeEach(() => helper.load([deviceNode, writeNode], flow(sim.port)));

    // a bad shape of msg is a bad argument; a value its type cannot hold is a bad value
    const cases = [
      ['no payload', {}, 'NINES_ERR_INVALID_ARG', /msg.payload must hold the value/],
      ['an object payload', { payload: { a: 1 } }, 'NINES_ERR_INVALID_ARG', /got an object/],
      ['a value that does not fit uint16', { payload: 70000 }, 'NINES_ERR_INVALID_VALUE', /outside uint16 range/],
      ['text for a number', { payload: 'abc' }, 'NINES_ERR_INVALID_VALUE', /finite number/],
      ['a read function code', { fc: 3, payload: 1 }, 'NINES_ERR_INVALID_ARG', /msg.fc 3 is not one this node sends/],
      ['an array for FC 5', { fc: 5, payload: [true] }, 'NINES_ERR_INVALID_ARG', /FC 5 writes one coil/],
      ['a bad coil value', { fc: 15, payload: [true, 'maybe'] }, 'NINES_ERR_INVALID_VALUE', /msg.payload\[1\]/],
      // nothing is coerced (issue 18)
      ['"on" for a coil', { fc: 5, payload: 'on' }, 'NINES_ERR_INVALID_VALUE', /msg.payload must be true or false.*got "on"/],
      ['hex text for a number', { payload: '0x10' }, 'NINES_ERR_INVALID_VALUE', /got "0x10"/],
      ['true for a number', { payload: true }, 'NINES_ERR_INVALID_VALUE', /got true/]
    ];
    for (const [what, msg, code, re] of cases) {
      it(`rejects ${what} (${code})`, async () => {
        const w = helper.getNode('w');
        const err = await expectError(w, msg);
        assert.equal(err.code, code);
        assert.match(err.message, re);
        await roundTrip(w, helper.getNode('out'), { payload: 7 });
        assert.equal(sim.model.banks.holdingRegisters[0], 7);
      });
    }
  });

  it('refuses 3.7 for an int16 register instead of rounding it to 4, and writes nothing', async () => {
    await helper.load([deviceNode, writeNode], flow(sim.port, { fc: 6, address: 5, dataType: 'int16' }));
    const w = helper.getNode('w');
    sim.model.banks.holdingRegisters[5] = 1;
    const err = await expectError(w, { payload: 3.7 });
    assert.equal(err.code, 'NINES_ERR_INVALID_VALUE');
    assert.match(err.message, /3\.7/);
    assert.equal(sim.stats.requests, 0);
    assert.equal(sim.model.banks.holdingRegisters[5], 1);
    // the node's status stays as it was: a refused value is the msg's fault, not the device's
    const s = w.status.getCalls().filter((c) => c.thisValue === w).map((c) => c.args[0]);
    assert.ok(s.every((x) => x.fill !== 'red'), JSON.stringify(s));
  });

  it('refuses FC 6 for a type that needs two registers', async () => {
    await helper.load([deviceNode, writeNode], flow(sim.port, { fc: 6, dataType: 'float32' }));
    const err = await expectError(helper.getNode('w'), { payload: 1.5 });
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.match(err.message, /FC 6 writes one register/);
  });

  it('writes a string two characters per register', async () => {
    await helper.load([deviceNode, writeNode], flow(sim.port, { address: 50, dataType: 'string' }));
    await roundTrip(helper.getNode('w'), helper.getNode('out'), { payload: 'ED-5' });
    const hr = sim.model.banks.holdingRegisters;
    assert.deepEqual([hr[50], hr[51]], [0x4544, 0x2D35]);
  });
});
