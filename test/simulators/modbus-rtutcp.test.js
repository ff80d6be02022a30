'use strict';

// The RTU-over-TCP simulator (`nines sim rtutcp`): RTU frames with CRC over a TCP listener, each connection a
// line of its own over one model; with modbus-serial's RTU-over-TCP client (a client nobody here wrote), raw
// sockets for the framing, and the faults it shares with the serial simulator.

const assert = require('node:assert/strict');
const net = require('node:net');
const ModbusRTU = require('modbus-serial');
const { createModbusRtuTcpSimulator } = require('../../gateway/simulators/modbus');
const { rtuFrame, rtuCrcOk, rtuResponseLength } = require('../../gateway/drivers/modbus/frame');

const hex = (s) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A raw socket speaking RTU frames: collects whole reply frames (by their length) so tests can check them.
 * @param {number} port
 */
async function rawRtu (port) {
  const socket = net.connect({ host: '127.0.0.1', port, noDelay: true });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let buf = Buffer.alloc(0);
  const frames = [];
  let waiter = null;
  socket.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      const n = buf.length >= 2 ? rtuResponseLength(buf) : 0;
      if (n <= 0 || buf.length < n) break;
      frames.push(buf.subarray(0, n));
      buf = buf.subarray(n);
    }
    if (waiter && frames.length >= waiter.n) waiter.resolve(frames.splice(0, waiter.n));
  });
  socket.on('error', () => {});
  const closed = new Promise((resolve) => socket.once('close', resolve));
  return {
    socket,
    closed,
    send: (unitId, pdu) => socket.write(rtuFrame(unitId, pdu)),
    /** @returns {Promise<Buffer[]>} the next n reply frames */
    next (n = 1) {
      if (frames.length >= n) return Promise.resolve(frames.splice(0, n));
      return new Promise((resolve) => { waiter = { n, resolve }; });
    },
    received: () => frames.length,
    close () {
      socket.destroy();
      return closed;
    }
  };
}

describe('Modbus RTU-over-TCP simulator', function () {
  this.timeout(10000);
  let sim;
  const open = [];
  afterEach(async () => {
    while (open.length) await open.pop()();
    if (sim) await sim.close();
    sim = null;
  });

  async function raw () {
    const r = await rawRtu(sim.port);
    open.push(() => r.close());
    return r;
  }

  it('serves modbus-serial\'s RTU-over-TCP client (connectTelnet; its "TcpRTUBuffered" port sends MBAP headers): reads and writes that read back', async () => {
    sim = await createModbusRtuTcpSimulator({ port: 0, modelOptions: { preset: 'pattern' } });
    const c = new ModbusRTU();
    await c.connectTelnet('127.0.0.1', { port: sim.port });
    open.push(() => new Promise((resolve) => c.close(() => resolve())));
    c.setID(1);
    c.setTimeout(1000);
    assert.deepEqual((await c.readHoldingRegisters(10, 3)).data, [10, 11, 12]);
    assert.deepEqual((await c.readInputRegisters(0, 2)).data, [1000, 1001]);
    assert.deepEqual((await c.readCoils(0, 4)).data.slice(0, 4), [false, true, false, true]);
    await c.writeRegisters(100, [7, 8, 9]);
    await c.writeCoil(3, false);
    assert.deepEqual([...sim.model.getRegisters('holdingRegisters', 100, 3)], [7, 8, 9]);
    assert.equal(sim.model.getBit('coils', 3), false);
    assert.equal(sim.stats.replies, 5);
    assert.equal(sim.stats.badFrames, 0);
  });

  it('answers with RTU frames (unit id first, CRC last, no MBAP header), for every unit of its list and none other', async () => {
    sim = await createModbusRtuTcpSimulator({ port: 0, modelOptions: { unitIds: [2, 5], preset: 'pattern' } });
    assert.equal(sim.url, `modbus+rtutcp://127.0.0.1:${sim.port}?unitId=2`);
    const r = await raw();
    r.send(5, hex('03 0004 0002'));
    const [reply] = await r.next();
    assert.equal(reply.toString('hex').slice(0, 14), '05030400040005');
    assert.ok(rtuCrcOk(reply));
    r.send(1, hex('03 0000 0001'));
    r.send(2, hex('03 0000 0001'));
    const [second] = await r.next();
    assert.equal(second[0], 2, 'unit 1 is another slave\'s business: no reply');
    assert.equal(sim.stats.ignored, 1);
  });

  it('keeps each connection a line of its own: half a frame on one does not mix with another\'s', async () => {
    sim = await createModbusRtuTcpSimulator({ port: 0, modelOptions: { preset: 'pattern' } });
    const a = await raw();
    const b = await raw();
    const frame = rtuFrame(1, hex('03 0001 0001'));
    a.socket.write(frame.subarray(0, 4));
    b.socket.write(frame);
    const [fromB] = await b.next();
    assert.equal(fromB.toString('hex').slice(0, 10), '0103020001');
    a.socket.write(frame.subarray(4));
    const [fromA] = await a.next();
    assert.deepEqual(fromA, fromB);
    assert.equal(sim.stats.connections, 2);
  });

  it('answers a hole in the map with exception 2, and gives no reply to a bad CRC', async () => {
    sim = await createModbusRtuTcpSimulator({ port: 0, modelOptions: { holes: { holdingRegisters: [[50, 59]] } } });
    const r = await raw();
    const bad = rtuFrame(1, hex('03 0000 0001'));
    bad[bad.length - 1] ^= 0xFF;
    r.socket.write(bad);
    r.send(1, hex('03 0037 0001'));
    const [reply] = await r.next();
    assert.equal(reply.toString('hex').slice(0, 6), '018302');
    assert.equal(sim.stats.badFrames, 1);
    assert.equal(sim.stats.exceptions, 1);
  });

  it('refuses connections beyond maxConnections (a serial server that takes one client per port)', async () => {
    sim = await createModbusRtuTcpSimulator({ port: 0, maxConnections: 1 });
    await raw();
    const second = net.connect({ host: '127.0.0.1', port: sim.port });
    second.on('error', () => {});
    await new Promise((resolve) => second.once('close', resolve));
    assert.equal(sim.stats.refused, 1);
    assert.equal(sim.stats.open, 1);
  });

  it('close fault: the connection is closed instead of answering, and counted', async () => {
    sim = await createModbusRtuTcpSimulator({ port: 0, faults: 'close=1' });
    const r = await raw();
    r.send(1, hex('03 0000 0001'));
    await r.closed;
    assert.equal(sim.stats.closed, 1);
    assert.equal(r.received(), 0);
  });

  it('latency fault delays every reply by at least the configured time', async () => {
    sim = await createModbusRtuTcpSimulator({ port: 0, faults: 'latency=30ms' });
    const r = await raw();
    const t0 = performance.now();
    r.send(1, hex('03 0000 0001'));
    await r.next();
    assert.ok(performance.now() - t0 >= 29, 'at least the fault latency');
  });

  it('rejects bad options with NINES_ERR_INVALID_ARG naming the field', async () => {
    const bad = [
      [{ port: -1 }, /port/],
      [{ maxConnections: 0 }, /maxConnections/],
      [{ needsInterFrameDelayMs: -5 }, /needsInterFrameDelayMs/],
      [{ needsDelayAfterConnectMs: '2 minutes' }, /needsDelayAfterConnectMs/],
      [{ oneAtATime: true }, /oneAtATime/]
    ];
    for (const [options, re] of bad) {
      await assert.rejects(createModbusRtuTcpSimulator(options), (e) => e.code === 'NINES_ERR_INVALID_ARG' && re.test(e.message), JSON.stringify(options));
    }
  });

  it('close() ends open connections and resolves with nothing left open', async () => {
    sim = await createModbusRtuTcpSimulator({ port: 0 });
    const r = await raw();
    await sim.close();
    await r.closed;
    assert.equal(sim.stats.open, 0);
  });
});

describe('simulator quirk modes: requests that come too soon are dropped and counted', function () {
  this.timeout(10000);
  let sim;
  const open = [];
  afterEach(async () => {
    while (open.length) await open.pop()();
    if (sim) await sim.close();
    sim = null;
  });

  it('needsDelayAfterConnectMs: a request soon after the connect goes unanswered, one after the delay is answered', async () => {
    sim = await createModbusRtuTcpSimulator({ port: 0, needsDelayAfterConnectMs: '150ms' });
    const r = await rawRtu(sim.port);
    open.push(() => r.close());
    r.send(1, hex('03 0000 0001'));
    // the simulator's verdict is in its counters, not in how long we waited
    while (sim.stats.requests === 0) await sleep(2);
    assert.equal(sim.stats.tooSoonAfterConnect, 1);
    assert.equal(r.received(), 0);
    await sleep(200);
    r.send(1, hex('03 0000 0001'));
    await r.next();
    assert.equal(sim.stats.replies, 1);
    assert.equal(sim.stats.tooSoonAfterConnect, 1);
  });

  it('needsInterFrameDelayMs: a request right behind a reply goes unanswered, one after the pause is answered', async () => {
    sim = await createModbusRtuTcpSimulator({ port: 0, needsInterFrameDelayMs: 100 });
    const r = await rawRtu(sim.port);
    open.push(() => r.close());
    r.send(1, hex('03 0000 0001'));
    await r.next();
    r.send(1, hex('03 0000 0001'));
    while (sim.stats.requests < 2) await sleep(2);
    assert.equal(sim.stats.tooSoonAfterReply, 1);
    await sleep(150);
    r.send(1, hex('03 0000 0001'));
    await r.next();
    assert.deepEqual([sim.stats.replies, sim.stats.tooSoonAfterReply, sim.stats.dropped], [2, 1, 0]);
  });

  it('the serial simulator refuses needsDelayAfterConnectMs: a serial line has no connection to count from', async () => {
    const { createModbusRtuSimulator } = require('../../gateway/simulators/modbus');
    await assert.rejects(createModbusRtuSimulator({ path: '/dev/null', needsDelayAfterConnectMs: 100, loadSerialPort: () => function () {} }),
      (e) => e.code === 'NINES_ERR_INVALID_ARG' && /needsDelayAfterConnectMs must be 0 on a serial line/.test(e.message));
  });
});
