'use strict';

// The client's FC8, FC22, FC23 and FC43/14 against the nines simulators, over Modbus TCP and RTU
// over TCP (whose reply lengths the client must know: FC43's varies with its objects), each also
// against a device that lacks it, and FC8's counters following real traffic on the line.

const assert = require('node:assert/strict');
const net = require('node:net');
const { once } = require('node:events');
const { createClient } = require('../../gateway/drivers/modbus');
const { createModbusTcpSimulator, createModbusRtuTcpSimulator } = require('../../gateway/simulators/modbus');

const KINDS = [
  ['Modbus TCP', createModbusTcpSimulator],
  ['RTU over TCP', createModbusRtuTcpSimulator]
];

for (const [kind, createSim] of KINDS) {
  describe(`modbus client FC8, FC22, FC23, FC43 (${kind})`, () => {
    let sim, client;
    afterEach(async () => {
      if (client) await client.close();
      if (sim) await sim.close();
      client = sim = null;
    });

    it('mask-writes one bit of a register, leaving the other 15', async () => {
      sim = await createSim({ port: 0 });
      client = createClient(sim.url, { timeoutMs: 1000 });
      sim.model.setRegister('holdingRegisters', 7, 0xA5A5);
      await client.maskWriteRegister(7, 0xFFF7, 0x0008); // bit 3 on
      await client.maskWriteRegister(7, 0xFFFE, 0x0000); // bit 0 off
      assert.equal(sim.model.getRegister('holdingRegisters', 7), (0xA5A5 | 8) & ~1);
    });

    it('writes then reads in one FC23 request', async () => {
      sim = await createSim({ port: 0, modelOptions: { preset: 'pattern' } });
      client = createClient(sim.url, { timeoutMs: 1000 });
      const r = await client.readWriteRegisters(20, 5, 22, [900, 901]);
      assert.deepEqual(r.data, [20, 21, 900, 901, 24]);
      assert.equal(r.buffer.length, 10);
    });

    it('reads FC8 counters that follow the traffic, and clears them', async () => {
      sim = await createSim({ port: 0, modelOptions: { holdingRegisters: 10 } });
      client = createClient(sim.url, { timeoutMs: 1000 });
      assert.equal((await client.diagnostics(0, 0x1234)).data, 0x1234);
      await client.readHoldingRegisters(0, 1);
      await assert.rejects(client.readHoldingRegisters(20, 1), { code: 'NINES_ERR_MODBUS_EXCEPTION' });
      assert.equal((await client.diagnostics(14)).data, 4, 'server messages, this one included');
      assert.equal((await client.diagnostics(13)).data, 1, 'exceptions');
      assert.equal((await client.diagnostics(11)).data, 6, 'bus messages');
      await client.diagnostics(10);
      assert.equal((await client.diagnostics(13)).data, 0);
    });

    it('reads the whole identification, in several requests when the objects do not fit one reply', async () => {
      const objects = {};
      for (let id = 0x80; id < 0x86; id++) objects[id] = `extended object ${id}`.padEnd(70, '-');
      sim = await createSim({ port: 0, modelOptions: { identification: { preset: 'ED-588', objects } } });
      client = createClient(sim.url, { timeoutMs: 1000 });
      const basic = await client.readDeviceIdentification({ readCode: 1 });
      assert.deepEqual([basic.vendorName, basic.productCode, basic.revision], ['Brainboxes', 'ED-588', '1.0']);
      assert.equal(basic.productName, undefined);
      const all = await client.readDeviceIdentification({ readCode: 3 });
      assert.ok(all.requests >= 2, `${all.requests} requests`);
      assert.equal(all.modelName, 'ED-588');
      assert.equal(all.userApplicationName, 'unit 1');
      for (const [id, text] of Object.entries(objects)) assert.equal(all.objects[id], text);
      assert.equal(all.conformityLevel, 0x83);
      const one = await client.readDeviceIdentification({ readCode: 4, objectId: 0x81 });
      assert.deepEqual(one.objects, { 0x81: objects[0x81] });
      assert.equal(client.stats.badReplies + client.stats.timeouts, 0);
    });

    it('reports each function code a device lacks as NINES_ERR_FC_UNSUPPORTED naming it, and writes nothing', async () => {
      sim = await createSim({ port: 0, modelOptions: { lacks: [8, 22, 23, 43] } });
      client = createClient(sim.url, { timeoutMs: 1000 });
      const calls = [[8, () => client.diagnostics(11)], [22, () => client.maskWriteRegister(0, 0, 1)],
        [23, () => client.readWriteRegisters(0, 1, 0, [1])], [43, () => client.readDeviceIdentification({ readCode: 1 })]];
      for (const [fc, call] of calls) {
        await assert.rejects(call(), (err) => err.code === 'NINES_ERR_FC_UNSUPPORTED' && err.details.fc === fc && new RegExp(`FC${fc}`).test(err.message));
      }
      assert.equal(sim.model.getRegister('holdingRegisters', 0), 0);
      assert.equal(client.stats.exceptions, 4);
      // the line is fine after them
      assert.equal((await client.readHoldingRegisters(0, 1)).data[0], 0);
    });
  });
}

describe('modbus client FC8 on an RTU line', () => {
  it('counts a frame with a bad CRC on the line as a bus communication error', async () => {
    const sim = await createModbusRtuTcpSimulator({ port: 0 });
    const client = createClient(sim.url, { timeoutMs: 1000 });
    const raw = net.connect(sim.port, '127.0.0.1');
    try {
      await once(raw, 'connect');
      raw.write(Buffer.from('0103000000010000', 'hex')); // FC3 to unit 1 with a CRC of 0000
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal((await client.diagnostics(12)).data, 1);
    } finally {
      raw.destroy();
      await client.close();
      await sim.close();
    }
  });
});

describe('modbus client FC43 over RTU framing, split anyhow', () => {
  it('reads a device identification that arrives a byte at a time, and one behind a late foreign frame', async () => {
    const { rtuFrame } = require('../../gateway/drivers/modbus/frame');
    const pdu = Buffer.concat([Buffer.from('2B0E0182000003', 'hex'),
      Buffer.from([0, 4]), Buffer.from('ACME'), Buffer.from([1, 3]), Buffer.from('X-1'), Buffer.from([2, 3]), Buffer.from('2.0')]);
    const reply = rtuFrame(5, pdu);
    const late = rtuFrame(9, Buffer.from('0302ABCD', 'hex')); // an FC3 reply of another unit: not ours
    let turn = 0;
    const server = net.createServer((socket) => {
      socket.on('data', async () => {
        const bytes = turn++ === 0 ? reply : Buffer.concat([late, reply]);
        for (const b of bytes) {
          socket.write(Buffer.from([b]));
          await new Promise((resolve) => setImmediate(resolve));
        }
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = createClient(`modbus+rtutcp://127.0.0.1:${server.address().port}?unitId=5`, { timeoutMs: 1000 });
    try {
      for (let i = 0; i < 2; i++) {
        const id = await client.readDeviceIdentification({ readCode: 1 });
        assert.deepEqual([id.vendorName, id.productCode, id.revision], ['ACME', 'X-1', '2.0']);
      }
      assert.equal(client.stats.badReplies, 0);
    } finally {
      await client.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('hands FC23\'s registers and FC43\'s objects to submit() handlers', async () => {
    const sim = await createModbusRtuTcpSimulator({ port: 0, modelOptions: { preset: 'pattern' } });
    const client = createClient(sim.url, { timeoutMs: 1000 });
    const { validateOp } = require('../../gateway/drivers/modbus/op');
    const submit = (op) => new Promise((resolve, reject) => client.submit(validateOp(op), undefined, {
      onReply: (r) => resolve({ data: r.data, buffer: r.buffer && Buffer.from(r.buffer) }), onError: reject
    }));
    try {
      const rw = await submit({ fc: 23, address: 3, quantity: 2, writeAddress: 100, values: [7] });
      assert.deepEqual(rw.data, [3, 4]);
      assert.deepEqual(rw.buffer, Buffer.from('00030004', 'hex'));
      const id = await submit({ fc: 43, readCode: 1 });
      assert.equal(id.data.objects[0][1], 'nines');
    } finally {
      await client.close();
      await sim.close();
    }
  });
});
