'use strict';

const assert = require('node:assert/strict');
const ModbusRTU = require('modbus-serial');
const { SerialPort } = require('serialport');
const { createModbusRtuSimulator, createModbusModel } = require('../../gateway/simulators/modbus');
const { RtuRequestFramer } = require('../../gateway/simulators/modbus/rtu-framer');
const { loadSerialPort } = require('../../gateway/simulators/modbus/serial-port');
const { rtuFrame } = require('../../gateway/drivers/modbus/frame');
const { createPtyPair } = require('../helpers/pty');

const hex = (s) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A framer that records what it delivers. */
function recorder () {
  const frames = [];
  const bad = [];
  const framer = new RtuRequestFramer({
    onFrame: (buf, start, end) => frames.push(Buffer.from(buf.subarray(start, end)).toString('hex')),
    onBadFrame: (n) => bad.push(n)
  });
  return { framer, frames, bad };
}

/** Opens the other PTY end as a raw serial line collecting whatever the simulator sends. */
async function rawLine (path) {
  const port = new SerialPort({ path, baudRate: 9600, autoOpen: false });
  await new Promise((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  let rx = Buffer.alloc(0);
  port.on('data', (d) => { rx = Buffer.concat([rx, d]); });
  return {
    write: (b) => port.write(b),
    /** Waits until at least n bytes arrived (or ms passed), returns them all. */
    async read (n, ms = 1000) {
      const t0 = performance.now();
      while (rx.length < n && performance.now() - t0 < ms) await sleep(2);
      const out = rx;
      rx = Buffer.alloc(0);
      return out;
    },
    close: () => new Promise((resolve) => port.close(() => resolve()))
  };
}

describe('Modbus RTU framer', () => {
  const read = rtuFrame(1, hex('03 0000 000A'));
  const write = rtuFrame(1, hex('10 0001 0002 04 000A 0102'));

  it('delivers a frame as soon as its last byte arrives, by length', () => {
    const { framer, frames } = recorder();
    framer.push(read);
    assert.deepEqual(frames, [read.toString('hex')]);
    assert.equal(framer.pendingBytes, 0);
  });

  it('reassembles frames fed a byte at a time, and several frames in one chunk', () => {
    const { framer, frames } = recorder();
    for (const byte of Buffer.concat([write, read])) framer.push(Buffer.from([byte]));
    framer.push(Buffer.concat([read, write, read]));
    assert.deepEqual(frames, [write, read, read, write, read].map((b) => b.toString('hex')));
  });

  it('skips garbage before a good frame and reports the bytes skipped once', () => {
    const { framer, frames, bad } = recorder();
    framer.push(Buffer.concat([hex('01 03 FF 17'), read]));
    assert.deepEqual(frames, [read.toString('hex')]);
    assert.deepEqual(bad, [4]);
  });

  it('does not deliver a frame with a bad CRC', () => {
    const { framer, frames, bad } = recorder();
    const corrupt = Buffer.from(read);
    corrupt[7] ^= 0xFF;
    framer.push(corrupt);
    framer.flush();
    assert.deepEqual(frames, []);
    assert.deepEqual(bad, [8]);
    assert.equal(framer.pendingBytes, 0);
  });

  it('ends a frame of unknown function code at the silence, so the model can answer exception 1', () => {
    const { framer, frames } = recorder();
    const fc7 = rtuFrame(1, hex('07'));
    framer.push(fc7);
    assert.deepEqual(frames, []);
    framer.flush();
    assert.deepEqual(frames, [fc7.toString('hex')]);
  });

  it('discards a partial frame at the silence', () => {
    const { framer, frames, bad } = recorder();
    framer.push(read.subarray(0, 5));
    framer.flush();
    framer.push(read);
    assert.deepEqual(frames, [read.toString('hex')]);
    assert.deepEqual(bad, [5]);
  });

  it('stays bounded on a long run of bytes that never form a frame', () => {
    const { framer, frames, bad } = recorder();
    framer.push(Buffer.alloc(5000, 0x41));
    assert.ok(framer.pendingBytes < 256);
    framer.flush();
    framer.push(read);
    assert.deepEqual(frames, [read.toString('hex')]);
    assert.equal(bad.reduce((a, b) => a + b, 0), 5000);
  });
});

describe('Modbus RTU simulator', function () {
  this.timeout(10000);
  let pty;
  let sim;
  let client;
  let line;
  beforeEach(async () => {
    pty = await createPtyPair();
  });
  afterEach(async () => {
    if (client && client.isOpen) await new Promise((resolve) => client.close(() => resolve()));
    if (line) await line.close();
    if (sim) await sim.close();
    // a pair that never started (no socat) leaves nothing to close
    if (pty) await pty.close();
    client = sim = line = pty = null;
  });

  async function connectClient (unitId = 1, timeoutMs = 500) {
    client = new ModbusRTU();
    await client.connectRTUBuffered(pty.b, { baudRate: 9600, parity: 'none' });
    client.setID(unitId);
    client.setTimeout(timeoutMs);
    return client;
  }

  it('serves all 8 function codes to modbus-serial connectRTUBuffered over a PTY pair', async () => {
    sim = await createModbusRtuSimulator({ path: pty.a, modelOptions: { preset: 'pattern' } });
    const c = await connectClient();
    assert.deepEqual((await c.readCoils(0, 4)).data.slice(0, 4), [false, true, false, true]);
    assert.deepEqual((await c.readDiscreteInputs(0, 4)).data.slice(0, 4), [true, false, false, true]);
    assert.deepEqual((await c.readHoldingRegisters(7, 3)).data, [7, 8, 9]);
    assert.deepEqual((await c.readInputRegisters(1, 2)).data, [1001, 1002]);
    await c.writeCoil(0, true);
    await c.writeRegister(1, 4321);
    await c.writeCoils(8, [true, true, true]);
    await c.writeRegisters(20, [1, 2, 3]);
    assert.equal(sim.model.getBit('coils', 0), true);
    assert.equal(sim.model.getRegister('holdingRegisters', 1), 4321);
    assert.deepEqual(sim.model.getBits('coils', 8, 3), [true, true, true]);
    assert.deepEqual((await c.readHoldingRegisters(20, 3)).data, [1, 2, 3]);
    await assert.rejects(c.readHoldingRegisters(9999, 5), { modbusCode: 2 });
    assert.equal(sim.stats.requests, 10);
    assert.equal(sim.stats.exceptions, 1);
  });

  it('gives no reply to another unit id (it is a bus) and counts it', async () => {
    sim = await createModbusRtuSimulator({ path: pty.a });
    const c = await connectClient(2, 150);
    await assert.rejects(c.readHoldingRegisters(0, 1), { errno: 'ETIMEDOUT' });
    assert.equal(sim.stats.ignored, 1);
    assert.equal(sim.stats.replies, 0);
  });

  it('gives no reply to a bad CRC, then answers the next good frame', async () => {
    sim = await createModbusRtuSimulator({ path: pty.a, modelOptions: { preset: 'pattern' } });
    line = await rawLine(pty.b);
    const good = rtuFrame(1, hex('03 0002 0001'));
    const corrupt = Buffer.from(good);
    corrupt[6] ^= 0x55;
    line.write(corrupt);
    while (sim.stats.badFrames === 0) await sleep(1); // reported at the silence after the corrupt frame
    assert.equal((await line.read(1, 20)).length, 0);
    line.write(good);
    assert.deepEqual(await line.read(7), rtuFrame(1, hex('03 02 0002')));
    assert.equal(sim.stats.badFrames, 1);
    assert.equal(sim.stats.requests, 1);
  });

  it('answers an unsupported function code with exception 1 after the inter-frame silence', async () => {
    sim = await createModbusRtuSimulator({ path: pty.a });
    line = await rawLine(pty.b);
    line.write(rtuFrame(1, hex('07')));
    assert.deepEqual(await line.read(5), rtuFrame(1, hex('87 01')));
  });

  it('executes broadcast writes (unit 0) without replying', async () => {
    sim = await createModbusRtuSimulator({ path: pty.a });
    line = await rawLine(pty.b);
    line.write(rtuFrame(0, hex('06 0003 0077')));
    while (sim.stats.requests === 0) await sleep(1);
    await sleep(20);
    assert.equal((await line.read(1, 20)).length, 0);
    assert.equal(sim.model.getRegister('holdingRegisters', 3), 0x77);
    assert.equal(sim.stats.broadcasts, 1);
  });

  it('applies latency faults (lower bound) and drops with the line still usable', async () => {
    sim = await createModbusRtuSimulator({ path: pty.a, faults: 'latency=40ms' });
    const c = await connectClient(1, 1000);
    const t0 = performance.now();
    await c.readHoldingRegisters(0, 2);
    assert.ok(performance.now() - t0 >= 40, `reply after ${performance.now() - t0} ms`);
    sim.faults.set('drop=1');
    c.setTimeout(150);
    await assert.rejects(c.readHoldingRegisters(0, 2), { errno: 'ETIMEDOUT' });
    assert.equal(sim.stats.dropped, 1);
    sim.faults.clear();
    c.setTimeout(1000);
    assert.deepEqual((await c.readHoldingRegisters(0, 2)).data, [0, 0]);
  });

  it('needsInterFrameDelayMs: a request right behind the line\'s last reply is dropped and counted', async () => {
    sim = await createModbusRtuSimulator({ path: pty.a, needsInterFrameDelayMs: '80ms' });
    const c = await connectClient(1, 1000);
    await c.readHoldingRegisters(0, 1);
    c.setTimeout(50);
    await assert.rejects(c.readHoldingRegisters(0, 1), { errno: 'ETIMEDOUT' });
    assert.equal(sim.stats.tooSoonAfterReply, 1);
    await sleep(100);
    c.setTimeout(1000);
    assert.deepEqual((await c.readHoldingRegisters(0, 1)).data, [0]);
    assert.equal(sim.stats.tooSoonAfterConnect, 0);
  });

  it('refuse means a powered-off device: nothing is answered', async () => {
    sim = await createModbusRtuSimulator({ path: pty.a, faults: 'refuse' });
    const c = await connectClient(1, 100);
    await assert.rejects(c.readHoldingRegisters(0, 1), { errno: 'ETIMEDOUT' });
    assert.equal(sim.stats.refused, 1);
  });

  it('gives its target URL and shares a given model', async () => {
    const model = createModbusModel({ unitIds: [9] });
    sim = await createModbusRtuSimulator({ path: pty.a, baudRate: 19200, parity: 'even', model });
    assert.equal(sim.url, `modbus+rtu://${pty.a}?unitId=9&baudRate=19200&parity=even&dataBits=8&stopBits=1`);
    assert.equal(sim.model, model);
  });

  it('rejects bad options with NINES_ERR_INVALID_ARG naming the field', async () => {
    await assert.rejects(createModbusRtuSimulator({}), { code: 'NINES_ERR_INVALID_ARG', message: /path/ });
    await assert.rejects(createModbusRtuSimulator({ path: pty.a, baudRate: 1234 }), { code: 'NINES_ERR_INVALID_ARG', message: /baudRate/ });
    await assert.rejects(createModbusRtuSimulator({ path: pty.a, parity: 'N' }), { code: 'NINES_ERR_INVALID_ARG', message: /parity/ });
    await assert.rejects(createModbusRtuSimulator({ path: pty.a, dataBits: 7 }), { code: 'NINES_ERR_INVALID_ARG', message: /dataBits/ });
    await assert.rejects(createModbusRtuSimulator({ path: pty.a, faults: 'drop=2' }), { code: 'NINES_ERR_INVALID_ARG', message: /drop/ });
  });

  it('rejects a device that cannot be opened with NINES_ERR_CONNECT_FAILED', async () => {
    await assert.rejects(createModbusRtuSimulator({ path: `${pty.dir}/missing` }), { code: 'NINES_ERR_CONNECT_FAILED' });
  });

  it('reports NINES_ERR_SERIAL_UNAVAILABLE when serialport cannot be loaded', async () => {
    const missing = () => {
      const err = new Error("Cannot find module 'serialport'");
      err.code = 'MODULE_NOT_FOUND';
      throw err;
    };
    assert.throws(() => loadSerialPort(missing), { code: 'NINES_ERR_SERIAL_UNAVAILABLE', message: /npm install serialport/ });
    await assert.rejects(createModbusRtuSimulator({ path: pty.a, loadSerialPort: () => loadSerialPort(missing) }),
      { code: 'NINES_ERR_SERIAL_UNAVAILABLE' });
  });
});
