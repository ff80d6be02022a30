'use strict';

// The Modbus TCP simulator with several requests in flight on one connection: all answered, in
// order, none lost, with or without latency faults; and its one-at-a-time mode, which drops what
// arrives while it is busy, as many real devices do.

const assert = require('node:assert/strict');
const net = require('node:net');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { createClient } = require('../../gateway/drivers/modbus');
const { mbapFrame } = require('../../gateway/drivers/modbus/frame');
const { until } = require('../helpers/wait');

const valueAt = (a) => (a * 7 + 3) & 0xFFFF;

/** An FC3 request ADU for one register at `address` */
const readAdu = (tid, address) => mbapFrame(tid, 1, Buffer.from([3, address >> 8, address & 0xFF, 0, 1]));

/** A raw socket that collects whole reply ADUs. */
async function rawClient (port) {
  const socket = net.connect({ host: '127.0.0.1', port, noDelay: true });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let buf = Buffer.alloc(0);
  const adus = [];
  socket.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 6 && buf.length >= 6 + buf.readUInt16BE(4)) {
      const n = 6 + buf.readUInt16BE(4);
      adus.push(buf.subarray(0, n));
      buf = buf.subarray(n);
    }
  });
  socket.on('error', () => {});
  return { socket, adus, close: () => socket.destroy() };
}

describe('Modbus TCP simulator: pipelined requests', function () {
  let sim;
  let raw;
  afterEach(async function () {
    if (raw) raw.close();
    if (sim) await sim.close();
    sim = raw = undefined;
  });

  async function start (opts = {}) {
    sim = await createModbusTcpSimulator({ port: 0, ...opts });
    const hr = sim.model.banks.holdingRegisters;
    for (let a = 0; a < hr.length; a++) hr[a] = valueAt(a);
    return sim;
  }

  it('answers 100,000 requests pipelined 16 deep on one connection, each with what it asked, none lost', async function () {
    this.timeout(60000);
    await start();
    const client = createClient(sim.url, { maxInflight: 16, timeoutMs: 2000 });
    try {
      await client.connect();
      const COUNT = 100000;
      const stopAt = Date.now() + 45000; // bounded in time as well as in count
      let next = 0;
      let ok = 0;
      const wrong = [];
      const lane = async () => {
        while (next < COUNT && Date.now() < stopAt) {
          const address = next++ % 10000;
          const r = await client.request({ fc: 3, address, quantity: 1 });
          if (r.data[0] !== valueAt(address)) wrong.push(address);
          ok++;
        }
      };
      await Promise.all(Array.from({ length: 16 }, lane));
      assert.equal(ok, COUNT, `only ${ok} of ${COUNT} within the time bound`);
      assert.deepEqual(wrong, []);
      assert.equal(sim.stats.requests, COUNT);
      assert.equal(sim.stats.replies, COUNT);
      assert.equal(sim.stats.dropped + sim.stats.busyDropped, 0);
      const s = client.stats;
      assert.equal(s.timeouts + s.errors + s.lateReplies + s.resets, 0, JSON.stringify(s));
      assert.equal(client.effectiveInflight, 16);
    } finally {
      await client.close();
    }
  });

  it('answers requests written in one chunk in their order, also when a latency fault delays each', async function () {
    for (const faults of [undefined, 'latency=1ms-3ms']) {
      await start({ faults });
      raw = await rawClient(sim.port);
      const tids = Array.from({ length: 20 }, (_, i) => 100 + i);
      raw.socket.write(Buffer.concat(tids.map((t) => readAdu(t, t))));
      await until(() => raw.adus.length === 20, `20 replies (faults ${faults})`);
      assert.deepEqual(raw.adus.map((a) => a.readUInt16BE(0)), tids, `order with faults ${faults}`);
      assert.deepEqual(raw.adus.map((a) => a.readUInt16BE(9)), tids.map(valueAt));
      assert.equal(sim.stats.dropped, 0);
      raw.close();
      await sim.close();
      sim = raw = undefined;
    }
  });

  it('one at a time: drops, unanswered and counted, the requests that came in the same chunk as the one it serves', async function () {
    await start({ oneAtATime: true });
    raw = await rawClient(sim.port);
    raw.socket.write(Buffer.concat([1, 2, 3, 4, 5].map((t) => readAdu(t, t))));
    await until(() => raw.adus.length === 1 && sim.stats.busyDropped === 4, 'one reply, four dropped');
    assert.equal(raw.adus[0].readUInt16BE(0), 1);
    // idle again: the next request is served
    raw.socket.write(readAdu(6, 6));
    await until(() => raw.adus.length === 2, 'the next reply');
    assert.equal(raw.adus[1].readUInt16BE(0), 6);
    assert.equal(sim.stats.dropped, 0, 'busy drops are counted apart from fault drops');
  });

  it('one at a time: drops a request that arrives while a delayed reply is still due, and serves the next one after it', async function () {
    await start({ oneAtATime: true, faults: 'latency=60ms' });
    raw = await rawClient(sim.port);
    raw.socket.write(readAdu(1, 1));
    await until(() => sim.stats.requests === 1, 'the first request read');
    raw.socket.write(readAdu(2, 2));
    await until(() => sim.stats.busyDropped === 1, 'the second dropped while the first is served');
    await until(() => raw.adus.length === 1, 'the first reply');
    raw.socket.write(readAdu(3, 3));
    await until(() => raw.adus.length === 2, 'the third reply');
    assert.deepEqual(raw.adus.map((a) => a.readUInt16BE(0)), [1, 3]);
    assert.equal(sim.stats.busyDropped, 1);
  });

  it('refuses a oneAtATime that is not true or false', async function () {
    await assert.rejects(createModbusTcpSimulator({ port: 0, oneAtATime: 'yes' }), (err) => err.code === 'NINES_ERR_INVALID_ARG' && err.details.field === 'oneAtATime');
  });
});
