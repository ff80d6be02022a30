'use strict';

const assert = require('node:assert/strict');
const net = require('node:net');
const ModbusRTU = require('modbus-serial');
const { createModbusTcpSimulator, createModbusModel } = require('../../gateway/simulators/modbus');
const { mbapFrame } = require('../../gateway/drivers/modbus/frame');
const { until } = require('../helpers/wait');

const hex = (s) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A raw Modbus TCP socket: collects whole reply ADUs so tests can check framing, order and transaction ids.
 * @param {number} port
 */
async function rawClient (port) {
  const socket = net.connect({ host: '127.0.0.1', port, noDelay: true });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let buf = Buffer.alloc(0);
  const adus = [];
  let waiter = null;
  socket.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 6 && buf.length >= 6 + buf.readUInt16BE(4)) {
      const n = 6 + buf.readUInt16BE(4);
      adus.push(buf.subarray(0, n));
      buf = buf.subarray(n);
    }
    if (waiter && adus.length >= waiter.n) waiter.resolve(adus.splice(0, waiter.n));
  });
  socket.on('error', () => {});
  const closed = new Promise((resolve) => socket.once('close', resolve));
  return {
    socket,
    closed,
    send: (b) => socket.write(b),
    /** @returns {Promise<Buffer[]>} the next n reply ADUs */
    next (n = 1) {
      if (adus.length >= n) return Promise.resolve(adus.splice(0, n));
      return new Promise((resolve) => { waiter = { n, resolve }; });
    },
    received: () => adus.length,
    close () {
      socket.destroy();
      return closed;
    }
  };
}

/**
 * How a connection attempt ends when the server resets it at once.
 * @param {number} port
 * @returns {Promise<boolean>} true when the socket closed without receiving a byte
 */
function refusedOutright (port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let bytes = 0;
    socket.on('data', (d) => { bytes += d.length; });
    socket.on('error', () => {});
    socket.once('close', () => resolve(bytes === 0));
  });
}

/** A modbus-serial TCP client (a client nobody here wrote) connected to the simulator. */
async function modbusSerialClient (port, unitId = 1, timeoutMs = 1000) {
  const client = new ModbusRTU();
  await client.connectTCP('127.0.0.1', { port });
  client.setID(unitId);
  client.setTimeout(timeoutMs);
  return client;
}

function closeClient (client) {
  return new Promise((resolve) => (client.isOpen ? client.close(() => resolve()) : resolve()));
}

describe('Modbus TCP simulator', () => {
  let sim;
  let clients;
  beforeEach(() => { clients = []; });
  afterEach(async () => {
    for (const c of clients) await (c.socket ? c.close() : closeClient(c));
    if (sim) await sim.close();
    sim = null;
  });
  const track = (c) => { clients.push(c); return c; };

  describe('with modbus-serial as the client', () => {
    beforeEach(async () => {
      sim = await createModbusTcpSimulator({ port: 0, modelOptions: { preset: 'pattern' } });
    });

    it('reads coils, discrete inputs, holding and input registers (FC1-FC4)', async () => {
      const c = track(await modbusSerialClient(sim.port));
      assert.deepEqual((await c.readCoils(0, 4)).data.slice(0, 4), [false, true, false, true]);
      assert.deepEqual((await c.readDiscreteInputs(3, 3)).data.slice(0, 3), [true, false, false]);
      assert.deepEqual((await c.readHoldingRegisters(100, 3)).data, [100, 101, 102]);
      assert.deepEqual((await c.readInputRegisters(0, 2)).data, [1000, 1001]);
      assert.equal(sim.stats.replies, 4);
    });

    it('writes a coil, a register, coils and registers (FC5, FC6, FC15, FC16)', async () => {
      const c = track(await modbusSerialClient(sim.port));
      await c.writeCoil(10, true);
      assert.equal(sim.model.getBit('coils', 10), true);
      await c.writeRegister(20, 0xBEEF);
      assert.equal(sim.model.getRegister('holdingRegisters', 20), 0xBEEF);
      await c.writeCoils(30, [true, true, false, true]);
      assert.deepEqual(sim.model.getBits('coils', 30, 4), [true, true, false, true]);
      await c.writeRegisters(40, [7, 8, 9]);
      assert.deepEqual(sim.model.getRegisters('holdingRegisters', 40, 3), [7, 8, 9]);
      assert.deepEqual((await c.readHoldingRegisters(40, 3)).data, [7, 8, 9]);
    });

    it('answers a read past the bank with exception 2, which the client reports as modbusCode 2', async () => {
      const c = track(await modbusSerialClient(sim.port));
      await assert.rejects(c.readHoldingRegisters(9999, 2), { modbusCode: 2 });
      assert.equal(sim.stats.exceptions, 1);
      assert.deepEqual((await c.readHoldingRegisters(9998, 2)).data, [9998, 9999]);
    });

    it('answers units 0 and 255 (this device) but not a unit the model does not serve', async () => {
      const c = track(await modbusSerialClient(sim.port, 255));
      assert.deepEqual((await c.readHoldingRegisters(1, 1)).data, [1]);
      c.setID(0);
      assert.deepEqual((await c.readHoldingRegisters(2, 1)).data, [2]);
      c.setID(7);
      c.setTimeout(150);
      await assert.rejects(c.readHoldingRegisters(0, 1), { errno: 'ETIMEDOUT' });
      assert.equal(sim.stats.ignored, 1);
    });

    it('gives its target URL', () => {
      assert.equal(sim.url, `modbus+tcp://127.0.0.1:${sim.port}?unitId=1`);
    });
  });

  describe('framing over a raw socket', () => {
    beforeEach(async () => {
      sim = await createModbusTcpSimulator({ port: 0, modelOptions: { preset: 'pattern' } });
    });

    it('answers pipelined requests in order, each with its transaction id and unit id', async () => {
      const c = track(await rawClient(sim.port));
      const requests = [
        mbapFrame(0x1001, 1, hex('03 0000 0002')),
        mbapFrame(0x1002, 255, hex('04 0001 0001')),
        mbapFrame(0x1003, 1, hex('06 0005 00AA')),
        mbapFrame(0x1004, 1, hex('03 FFFF 0001')),
        mbapFrame(0xFFFF, 0, hex('01 0000 0008'))
      ];
      c.send(Buffer.concat(requests));
      const replies = await c.next(5);
      assert.deepEqual(replies, [
        hex('1001 0000 0007 01 03 04 0000 0001'),
        hex('1002 0000 0005 FF 04 02 03E9'),
        hex('1003 0000 0006 01 06 0005 00AA'),
        hex('1004 0000 0003 01 83 02'),
        hex('FFFF 0000 0004 00 01 01 AA')
      ]);
    });

    it('reassembles an ADU sent one byte at a time', async () => {
      const c = track(await rawClient(sim.port));
      for (const byte of mbapFrame(7, 1, hex('03 0002 0003'))) {
        c.send(Buffer.from([byte]));
        await sleep(1);
      }
      assert.deepEqual(await c.next(1), [hex('0007 0000 0009 01 03 06 0002 0003 0004')]);
    });

    it('reassembles ADUs split across chunks at every boundary', async () => {
      const c = track(await rawClient(sim.port));
      const two = Buffer.concat([mbapFrame(1, 1, hex('03 0000 0001')), mbapFrame(2, 1, hex('10 0000 0001 02 1234'))]);
      for (let cut = 1; cut < two.length; cut++) {
        c.send(two.subarray(0, cut));
        await sleep(1);
        c.send(two.subarray(cut));
        const [a, b] = await c.next(2);
        assert.equal(a.readUInt16BE(0), 1);
        assert.equal(b.readUInt16BE(0), 2);
      }
      assert.equal(sim.stats.requests, 2 * (two.length - 1));
    });

    it('closes the connection on a protocol id other than 0 and counts a bad frame', async () => {
      const c = track(await rawClient(sim.port));
      c.send(hex('0001 0001 0006 01 03 0000 0001'));
      await c.closed;
      assert.equal(sim.stats.badFrames, 1);
      assert.equal(c.received(), 0);
    });

    it('closes the connection on an MBAP length out of range (0-1 or above 254)', async () => {
      for (const header of ['0001 0000 0001 01', '0001 0000 00FF 01 03']) {
        const c = track(await rawClient(sim.port));
        c.send(hex(header));
        await c.closed;
      }
      assert.equal(sim.stats.badFrames, 2);
    });

    it('answers a PDU whose byte count disagrees with the MBAP length with exception 3', async () => {
      const c = track(await rawClient(sim.port));
      c.send(mbapFrame(9, 1, hex('10 0000 0002 04 0001')));
      assert.deepEqual(await c.next(1), [hex('0009 0000 0003 01 90 03')]);
    });

    it('answers an unsupported function code with exception 1', async () => {
      const c = track(await rawClient(sim.port));
      // MEI type 13 (CANopen): FC43 with MEI type 14, device identification, is answered now
      c.send(mbapFrame(3, 1, hex('2B 0D 01 00')));
      assert.deepEqual(await c.next(1), [hex('0003 0000 0003 01 AB 01')]);
    });
  });

  describe('lifecycle and options', () => {
    it('rejects a port in use with NINES_ERR_PORT_IN_USE', async () => {
      sim = await createModbusTcpSimulator({ port: 0 });
      await assert.rejects(createModbusTcpSimulator({ port: sim.port }), { code: 'NINES_ERR_PORT_IN_USE', name: 'NinesError' });
    });

    it('rejects bad options with NINES_ERR_INVALID_ARG naming the field', async () => {
      await assert.rejects(createModbusTcpSimulator({ port: -1 }), { code: 'NINES_ERR_INVALID_ARG', message: /port must be an integer from 0 to 65535/ });
      await assert.rejects(createModbusTcpSimulator({ port: 0, maxConnections: 0 }), { code: 'NINES_ERR_INVALID_ARG', message: /maxConnections/ });
      await assert.rejects(createModbusTcpSimulator({ port: 0, faults: 'latency=fast' }), { code: 'NINES_ERR_INVALID_ARG', message: /latency/ });
      await assert.rejects(createModbusTcpSimulator({ port: 0, prot: 1 }), { code: 'NINES_ERR_INVALID_ARG', message: /options\.prot/ });
      await assert.rejects(createModbusTcpSimulator({ port: 0, directUnitIds: [300] }), { code: 'NINES_ERR_INVALID_ARG', message: /directUnitIds/ });
      await assert.rejects(createModbusTcpSimulator({ port: 0, model: createModbusModel(), modelOptions: {} }), { code: 'NINES_ERR_INVALID_ARG', message: /modelOptions/ });
      await assert.rejects(createModbusTcpSimulator({ port: 0, model: {} }), { code: 'NINES_ERR_INVALID_ARG', message: /model/ });
    });

    it('shares a given model, so values written over the wire are seen by its owner', async () => {
      const model = createModbusModel({ unitIds: [3] });
      sim = await createModbusTcpSimulator({ port: 0, model });
      assert.equal(sim.url, `modbus+tcp://127.0.0.1:${sim.port}?unitId=3`);
      const c = track(await modbusSerialClient(sim.port, 3));
      await c.writeRegister(0, 42);
      assert.equal(model.getRegister('holdingRegisters', 0), 42);
    });

    it('refuses connections beyond maxConnections and counts them', async () => {
      sim = await createModbusTcpSimulator({ port: 0, maxConnections: 1 });
      const first = track(await rawClient(sim.port));
      assert.equal(await refusedOutright(sim.port), true);
      assert.equal(sim.stats.refused, 1);
      first.send(mbapFrame(1, 1, hex('03 0000 0001')));
      assert.equal((await first.next(1)).length, 1);
    });

    it('close() destroys open connections and resolves with nothing left open', async () => {
      sim = await createModbusTcpSimulator({ port: 0 });
      const c = track(await rawClient(sim.port));
      c.send(mbapFrame(1, 1, hex('03 0000 0001')));
      await c.next(1);
      await sim.close();
      await c.closed;
      assert.equal(sim.stats.open, 0);
      assert.equal(sim.server.listening, false);
      await sim.close(); // idempotent
    });
  });
  describe('faults', () => {
    const read1 = (tid) => mbapFrame(tid, 1, hex('03 0000 0001'));

    it('latency delays every reply by at least the configured time', async () => {
      sim = await createModbusTcpSimulator({ port: 0, faults: 'latency=30ms' });
      const c = track(await modbusSerialClient(sim.port));
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        await c.readHoldingRegisters(0, 10);
        assert.ok(performance.now() - t0 >= 30, `reply after ${performance.now() - t0} ms`);
      }
    });

    it('answers pipelined requests in order when faults delay them, the device serving one at a time', async () => {
      sim = await createModbusTcpSimulator({ port: 0, faults: 'latency=1ms-20ms,seed=7' });
      const c = track(await rawClient(sim.port));
      const t0 = performance.now();
      c.send(Buffer.concat([1, 2, 3, 4, 5, 6].map(read1)));
      const replies = await c.next(6);
      assert.deepEqual(replies.map((r) => r.readUInt16BE(0)), [1, 2, 3, 4, 5, 6]);
      assert.ok(performance.now() - t0 >= 6, 'six delays of at least 1 ms each, in series');
    });

    it('needsDelayAfterConnectMs and needsInterFrameDelayMs: requests too soon after the connect or the last reply are dropped and counted', async () => {
      sim = await createModbusTcpSimulator({ port: 0, needsDelayAfterConnectMs: 100, needsInterFrameDelayMs: '60ms' });
      const c = track(await modbusSerialClient(sim.port, 1, 40));
      await assert.rejects(c.readHoldingRegisters(0, 1), { errno: 'ETIMEDOUT' });
      assert.equal(sim.stats.tooSoonAfterConnect, 1);
      await sleep(100);
      c.setTimeout(1000);
      assert.deepEqual((await c.readHoldingRegisters(0, 1)).data, [0]);
      c.setTimeout(30);
      await assert.rejects(c.readHoldingRegisters(0, 1), { errno: 'ETIMEDOUT' });
      assert.equal(sim.stats.tooSoonAfterReply, 1);
      await sleep(60);
      c.setTimeout(1000);
      assert.deepEqual((await c.readHoldingRegisters(0, 1)).data, [0]);
      assert.deepEqual([sim.stats.replies, sim.stats.dropped, sim.stats.tooSoonAfterConnect, sim.stats.tooSoonAfterReply], [2, 0, 1, 1]);
    });

    it('drop: the client times out, and the connection stays usable', async () => {
      sim = await createModbusTcpSimulator({ port: 0, faults: 'drop=1' });
      const c = track(await modbusSerialClient(sim.port, 1, 100));
      await assert.rejects(c.readHoldingRegisters(0, 1), { errno: 'ETIMEDOUT' });
      assert.equal(sim.stats.dropped, 1);
      sim.faults.clear();
      c.setTimeout(1000);
      assert.deepEqual((await c.readHoldingRegisters(0, 1)).data, [0]);
      assert.equal(sim.stats.connections, 1);
    });

    it('drop does not execute a write', async () => {
      sim = await createModbusTcpSimulator({ port: 0, faults: 'drop=1' });
      const c = track(await rawClient(sim.port));
      c.send(mbapFrame(1, 1, hex('06 0000 0009')));
      await until(() => sim.stats.dropped === 1);
      await sleep(20);
      assert.equal(sim.model.getRegister('holdingRegisters', 0), 0);
      assert.equal(c.received(), 0);
    });

    it('close: the connection is closed instead of answering, and counted', async () => {
      sim = await createModbusTcpSimulator({ port: 0, faults: 'close=1' });
      const c = track(await rawClient(sim.port));
      c.send(read1(1));
      await c.closed;
      assert.equal(c.received(), 0);
      assert.equal(sim.stats.closed, 1);
    });

    it('garbage: junk comes back instead of the reply, and is counted', async () => {
      sim = await createModbusTcpSimulator({ port: 0, faults: 'garbage=1' });
      const socket = net.connect({ host: '127.0.0.1', port: sim.port });
      track({ socket, close: () => { socket.destroy(); return Promise.resolve(); } });
      await new Promise((resolve) => socket.once('connect', resolve));
      const junk = new Promise((resolve) => socket.once('data', resolve));
      socket.write(read1(1));
      const bytes = await junk;
      assert.notDeepEqual(bytes.subarray(0, 2), hex('0001'));
      assert.equal(sim.stats.garbage, 1);
      assert.equal(sim.stats.replies, 0);
    });

    it('refuse: new connections are reset at once and counted', async () => {
      sim = await createModbusTcpSimulator({ port: 0, faults: 'refuse' });
      assert.equal(await refusedOutright(sim.port), true);
      assert.equal(sim.stats.refused, 1);
      assert.equal(sim.stats.connections, 0);
      sim.faults.clear();
      const c = track(await modbusSerialClient(sim.port));
      assert.deepEqual((await c.readHoldingRegisters(0, 1)).data, [0]);
    });

    it('stall: replies due during a stall are held until it ends, then all go out in order', async () => {
      sim = await createModbusTcpSimulator({ port: 0 });
      const c = track(await rawClient(sim.port));
      sim.faults.stall(150);
      const t0 = performance.now();
      c.send(read1(1));
      await sleep(20);
      c.send(read1(2));
      const replies = await c.next(2);
      assert.ok(performance.now() - t0 >= 150, `held ${performance.now() - t0} ms`);
      assert.deepEqual(replies.map((r) => r.readUInt16BE(0)), [1, 2]);
      c.send(read1(3));
      await c.next(1); // the stall is over: answered at once
    });

    it('stall: a reply already waiting when a stall starts is held too', async () => {
      sim = await createModbusTcpSimulator({ port: 0, faults: 'latency=100ms' });
      const c = track(await rawClient(sim.port));
      const t0 = performance.now();
      c.send(read1(1));
      await until(() => sim.stats.requests === 1);
      sim.faults.stall(300); // starts while the reply waits for its 100 ms latency
      await c.next(1);
      assert.ok(performance.now() - t0 >= 300, `reply after ${performance.now() - t0} ms`);
    });

    it('a scheduled stall from the spec holds replies from the start', async () => {
      const t0 = performance.now(); // before start(), so the stall ends at least 100 ms after t0
      sim = await createModbusTcpSimulator({ port: 0, faults: 'stall=100ms@0s' });
      const c = track(await modbusSerialClient(sim.port));
      await c.readHoldingRegisters(0, 1);
      assert.ok(performance.now() - t0 >= 100, `reply after ${performance.now() - t0} ms`);
    });

    it('drops and counts requests beyond maxPending delayed replies', async () => {
      sim = await createModbusTcpSimulator({ port: 0, faults: 'latency=30ms', maxPending: 2 });
      const c = track(await rawClient(sim.port));
      c.send(Buffer.concat([1, 2, 3, 4, 5].map(read1)));
      const replies = await c.next(2);
      assert.deepEqual(replies.map((r) => r.readUInt16BE(0)), [1, 2]);
      assert.equal(sim.stats.dropped, 3);
    });

    it('close() drops delayed replies and clears their timers', async () => {
      sim = await createModbusTcpSimulator({ port: 0, faults: 'latency=5s' });
      const c = track(await rawClient(sim.port));
      c.send(read1(1));
      await until(() => sim.stats.requests === 1);
      await sim.close();
      await c.closed;
      assert.equal(c.received(), 0);
    });
  });
});
