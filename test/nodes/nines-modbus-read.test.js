'use strict';

const assert = require('node:assert/strict');
const { helper, roundTrip, expectError, waitStatus, withModbusSim } = require('./harness');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const deviceNode = require('../../nodes/nines-modbus-device');
const readNode = require('../../nodes/nines-modbus-read');

function flow (port, read = {}, device = {}) {
  return [
    { id: 'dev', type: 'nines-modbus-device', transport: 'tcp', host: '127.0.0.1', port, unitId: 1, timeout: 300, allowWrites: false, ...device },
    { id: 'r', type: 'nines-modbus-read', device: 'dev', fc: 3, address: 0, quantity: 1, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, wires: [['out']], ...read },
    { id: 'out', type: 'helper' }
  ];
}

describe('nines-modbus-read', function () {
  let sim;
  withModbusSim(() => sim, (s) => { sim = s; });

  it('reads holding registers and decodes float32 in word-swapped (CDAB) order', async () => {
    const hr = sim.model.banks.holdingRegisters;
    hr[10] = 0xE979; hr[11] = 0x42F6; hr[12] = 0x0000; hr[13] = 0x4120;
    await helper.load([deviceNode, readNode], flow(sim.port, { address: 10, quantity: 4, dataType: 'float32', wordOrder: 'little' }));
    const msg = await roundTrip(helper.getNode('r'), helper.getNode('out'), { payload: 'go' });
    assert.equal(msg.payload.length, 2);
    assert.ok(Math.abs(msg.payload[0] - 123.456) < 1e-4, `got ${msg.payload[0]}`);
    assert.equal(msg.payload[1], 10);
    assert.deepEqual(msg.data, [0xE979, 0x42F6, 0x0000, 0x4120]);
    assert.ok(Buffer.isBuffer(msg.buffer));
    assert.equal(typeof msg.latency, 'number');
    assert.ok(msg.latency >= 0);
    assert.deepEqual(msg.modbus, { fc: 3, address: 10, quantity: 4, unitId: 1 });
  });

  it('applies scale and offset to int16 registers', async () => {
    sim.model.banks.inputRegisters[0] = 215;
    sim.model.banks.inputRegisters[1] = 0xFFFF;
    await helper.load([deviceNode, readNode], flow(sim.port, { fc: 4, quantity: 2, dataType: 'int16', scale: 0.1 }));
    const msg = await roundTrip(helper.getNode('r'), helper.getNode('out'), {});
    assert.deepEqual(msg.payload.map((v) => +v.toFixed(3)), [21.5, -0.1]);
  });

  it('takes fc, address, quantity and unitId from the msg, and gives coils as booleans', async () => {
    const coils = sim.model.banks.coils;
    coils[5] = 1; coils[7] = 1;
    await helper.load([deviceNode, readNode], flow(sim.port));
    const msg = await roundTrip(helper.getNode('r'), helper.getNode('out'), { fc: 1, address: '5', quantity: 3, unitId: 1 });
    assert.deepEqual(msg.payload, [true, false, true]);
    assert.deepEqual(msg.modbus, { fc: 1, address: 5, quantity: 3, unitId: 1 });
  });

  it('shows connected once the device answers', async () => {
    await helper.load([deviceNode, readNode], flow(sim.port));
    const s = await waitStatus(helper.getNode('r'), (st) => st.fill === 'green', 'connected');
    assert.equal(s.text, 'node-red:common.status.connected');
  });

  describe('bad msgs get a coded error and the node stays healthy', () => {
    beforeEach(() => helper.load([deviceNode, readNode], flow(sim.port)));

    const cases = [
      ['an address out of range', { address: 70000 }, 'NINES_ERR_INVALID_ARG', /msg.address must be an integer from 0 to 65535/],
      ['a write function code', { fc: 6 }, 'NINES_ERR_INVALID_ARG', /msg.fc 6 is not one this node sends/],
      ['a quantity of 0', { quantity: 0 }, 'NINES_ERR_INVALID_ARG', /msg.quantity/],
      ['a non-numeric unit id', { unitId: 'x' }, 'NINES_ERR_INVALID_ARG', /msg.unitId/],
      ['a read past the end of the address space', { address: 65535, quantity: 2 }, 'NINES_ERR_INVALID_OP', /address \+ quantity/]
    ];
    for (const [what, msg, code, re] of cases) {
      it(`rejects ${what} (${code})`, async () => {
        const err = await expectError(helper.getNode('r'), msg);
        assert.equal(err.code, code);
        assert.match(err.message, re);
        // still healthy: the next good msg is answered
        const ok = await roundTrip(helper.getNode('r'), helper.getNode('out'), {});
        assert.deepEqual(ok.payload, [0]);
      });
    }
  });

  it('refuses a quantity that does not hold whole values of the type', async () => {
    await helper.load([deviceNode, readNode], flow(sim.port, { quantity: 3, dataType: 'float32' }));
    const err = await expectError(helper.getNode('r'), {});
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.match(err.message, /3 registers do not hold a whole number of float32/);
  });

  it('reports a Modbus exception with its code and shows it in the status', async () => {
    await helper.load([deviceNode, readNode], flow(sim.port, { address: 20000, quantity: 1 }));
    const node = helper.getNode('r');
    const err = await expectError(node, {});
    assert.equal(err.code, 'NINES_ERR_MODBUS_EXCEPTION');
    await waitStatus(node, (s) => s.fill === 'red' && s.text === 'modbus exception', 'modbus exception');
  });

  it('rejects a bad data type set in the flow JSON at deploy and on every msg', async () => {
    await helper.load([deviceNode, readNode], flow(sim.port, { dataType: 'float128' }));
    const node = helper.getNode('r');
    await waitStatus(node, (s) => s.fill === 'red' && s.text === 'bad argument', 'bad argument');
    const err = await expectError(node, {});
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.match(err.message, /type must be one of/);
  });

  it('shows the error while the device is down and recovers by itself when it returns', async () => {
    await helper.load([deviceNode, readNode], flow(sim.port));
    const node = helper.getNode('r');
    await waitStatus(node, (s) => s.fill === 'green', 'connected');
    const port = sim.port;
    await sim.close();
    await waitStatus(node, (s) => s.fill === 'red', 'red while down');
    const err = await expectError(node, {});
    assert.ok(['NINES_ERR_REPLY_TIMEOUT', 'NINES_ERR_CONNECT_FAILED', 'NINES_ERR_CONNECTION_CLOSED', 'NINES_ERR_NOT_CONNECTED'].includes(err.code), err.code);
    sim = await createModbusTcpSimulator({ port });
    sim.model.banks.holdingRegisters[0] = 42;
    await waitStatus(node, (s) => s.fill === 'green', 'green again', 15000);
    const msg = await roundTrip(node, helper.getNode('out'), {});
    assert.deepEqual(msg.payload, [42]);
  });
});
