'use strict';

// Interop with pymodbus, a Modbus stack nobody here wrote: nines' client reads pymodbus's device
// identification (every read code, and one object) and mask-writes its register; pymodbus's client
// reads the simulator's identification (following "more follows") and mask-writes the simulator's.
// A write by tag of a part of a register reaches pymodbus as FC22, the rest of its register kept.

const assert = require('node:assert/strict');
const { createClient } = require('../../gateway/drivers/modbus');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { runPymodbusFcsClient, startPymodbusFcsServer } = require('../helpers/pymodbus');
const { buildTags } = require('../../gateway/tags/spec');
const { encodeTagWrites, runTagWrites } = require('../../gateway/tags/write');

describe('FC43 and FC22 against pymodbus', function () {
  this.timeout(30000);

  it('nines reads a pymodbus server\'s identification and mask-writes one of its registers', async () => {
    const server = await startPymodbusFcsServer();
    const client = createClient(`modbus+tcp://127.0.0.1:${server.port}?unitId=1`, { timeoutMs: 3000 });
    try {
      const basic = await client.readDeviceIdentification({ readCode: 1 });
      assert.deepEqual(basic.objects, { 0: 'pymodbus vendor', 1: 'PM-43', 2: '3.0' });
      const regular = await client.readDeviceIdentification({ readCode: 2 });
      assert.deepEqual([regular.vendorUrl, regular.productName, regular.modelName, regular.userApplicationName],
        ['https://example.invalid/pymodbus', 'pymodbus server', 'interop', 'nines interop test']);
      const extended = await client.readDeviceIdentification({ readCode: 3 });
      assert.equal(extended.objects[0x80], 'extended object');
      const one = await client.readDeviceIdentification({ readCode: 4, objectId: 0x80 });
      assert.deepEqual(one.objects, { 0x80: 'extended object' });
      // holding register 7 holds 7: bit 3 on, bit 0 off
      await client.maskWriteRegister(7, 0xFFF6, 0x0008);
      assert.deepEqual((await client.readHoldingRegisters(7, 1)).data, [(7 | 8) & ~1]);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('a write by tag of a bit, a bit field and a byte reaches a pymodbus server as FC22, the other bits kept', async () => {
    const server = await startPymodbusFcsServer();
    const client = createClient(`modbus+tcp://127.0.0.1:${server.port}?unitId=1`, { timeoutMs: 3000 });
    const tags = buildTags([
      { name: 'ready', table: 'holding', address: 100, type: 'bit', bit: 0 },
      { name: 'mode', table: 'holding', address: 100, type: 'bits', bit: '8-11' },
      { name: 'gain', table: 'holding', address: 101, type: 'int8', byte: 'high' }
    ], { protocol: 'modbus+tcp' });
    try {
      const writes = encodeTagWrites(tags, { ready: true, mode: 10, gain: -1 }, { protocol: 'modbus+tcp' });
      assert.deepEqual(writes.map((w) => w.ops[0].fc), [22, 22, 22]);
      const out = await runTagWrites(writes, (op) => client.request(op));
      assert.equal(out.ok, true, JSON.stringify(out.results));
      // register i holds i: 100 = 0x0064 and 101 = 0x0065 before
      assert.deepEqual((await client.readHoldingRegisters(100, 2)).data, [0x0A65, 0xFF65]);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('pymodbus reads the simulator\'s identification, in pieces, and mask-writes its register', async () => {
    const objects = {};
    for (let id = 0x80; id < 0x86; id++) objects[id] = `extended ${id}`.padEnd(60, '.');
    const sim = await createModbusTcpSimulator({ port: 0, modelOptions: { identification: { preset: 'ED-560', objects } } });
    try {
      sim.model.setRegister('holdingRegisters', 3, 0x00F0);
      const [basic, all, masked] = await runPymodbusFcsClient({ port: sim.port, unit: 1, ops: [{ deviceId: [1, 0] }, { deviceId: [3, 0] }, { mask: [3, 0xFF0F, 0x0050] }] });
      assert.deepEqual(basic.objects, { 0: 'Brainboxes', 1: 'ED-560', 2: '1.0' });
      assert.ok(all.requests >= 2, `${all.requests} requests`);
      assert.equal(all.conformity, 0x83);
      assert.equal(all.objects[6], 'unit 1');
      for (const [id, text] of Object.entries(objects)) assert.equal(all.objects[id], text);
      assert.equal(masked, true);
      // bits 4-7 (AND 0) take the OR mask's: 0101; the rest keep theirs (0)
      assert.equal(sim.model.getRegister('holdingRegisters', 3), 0x0050);
    } finally {
      await sim.close();
    }
  });
});
