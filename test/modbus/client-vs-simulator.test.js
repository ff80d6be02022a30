'use strict';

// The client against the nines Modbus simulators (gateway/simulators/modbus): closed loops over TCP and
// RTU, values checked against the simulator's model, and a fault spec the client must survive.
// Throughput is printed for information only: tests never assert times or rates.

const assert = require('node:assert/strict');
const { createClient, parseOpString } = require('../../gateway/drivers/modbus');
const { createModbusTcpSimulator, createModbusRtuSimulator } = require('../../gateway/simulators/modbus');
const { createPtyPair } = require('../helpers/pty');

/** Closed loop for `ms`: returns the number of replies; every reply is checked by `check`. */
async function closedLoop (client, op, ms, check) {
  const end = process.hrtime.bigint() + BigInt(ms) * 1000000n;
  let n = 0;
  while (process.hrtime.bigint() < end) {
    check(await client.request(op));
    n++;
  }
  return n;
}

describe('modbus client vs the nines simulators', () => {
  it('runs a closed loop of FC3 x10 against the TCP simulator without an error', async function () {
    const sim = await createModbusTcpSimulator({ port: 0 });
    const client = createClient(sim.url);
    try {
      sim.model.setRegisters('holdingRegisters', 0, [0, 11, 22, 33, 44, 55, 66, 77, 88, 99]);
      const op = parseOpString('3:0:10');
      const ms = 500;
      const n = await closedLoop(client, op, ms, (r) => assert.equal(r.data[9], 99));
      const s = client.stats;
      assert.equal(s.ok, n);
      assert.equal(s.errors + s.timeouts + s.lateReplies + s.badFrames, 0);
      this.test.title += ` (${Math.round(n * 1000 / ms)} req/s, in-process)`;
    } finally {
      await client.close();
      await sim.close();
    }
  });

  it('writes through the TCP simulator\'s model with every function code', async () => {
    const sim = await createModbusTcpSimulator({ port: 0 });
    const client = createClient(sim.url);
    try {
      await client.request('16:100=1,-2,3');
      assert.deepEqual(Array.from(sim.model.getRegisters('holdingRegisters', 100, 3)), [1, 65534, 3]);
      await client.request('6:103=7');
      assert.deepEqual((await client.request('3:100:4')).data, [1, 65534, 3, 7]);
      await client.request('15:10=1,0,1');
      await client.request('5:13=on');
      assert.deepEqual((await client.request('1:10:4')).data, [true, false, true, true]);
      assert.equal((await client.request('2:0:8')).data.length, 8);
      assert.equal((await client.request('4:0:5')).data.length, 5);
    } finally {
      await client.close();
      await sim.close();
    }
  });

  it('keeps every reply matched to its request under simulated latency spikes and drops', async () => {
    const sim = await createModbusTcpSimulator({ port: 0, faults: 'latency=1ms,spike=0.05:60ms,drop=0.02', faultOptions: { random: lcg(7) } });
    const client = createClient(sim.url, { timeoutMs: 40 });
    try {
      for (let a = 0; a < 100; a++) sim.model.setRegister('holdingRegisters', a, 1000 + a);
      const codes = new Set();
      let ok = 0;
      for (let i = 0; i < 120; i++) {
        const a = i % 100;
        try {
          const r = await client.request({ fc: 3, address: a, quantity: 1 });
          assert.equal(r.data[0], 1000 + a, `request ${i} got another request's reply`);
          ok++;
        } catch (err) {
          codes.add(err.code);
        }
      }
      assert.ok(ok > 60);
      assert.deepEqual([...codes], codes.size ? ['NINES_ERR_REPLY_TIMEOUT'] : []);
    } finally {
      await client.close();
      await sim.close();
    }
  });

  it('runs FC3 and FC16 against the RTU simulator over a PTY pair', async function () {
    const pty = await createPtyPair();
    const sim = await createModbusRtuSimulator({ path: pty.a, baudRate: 115200 });
    const client = createClient(`modbus+rtu://${pty.b}?baudRate=115200&unitId=1`);
    try {
      await client.request('16:0=5,6,7');
      const op = parseOpString('3:0:3');
      const ms = 300;
      const n = await closedLoop(client, op, ms, (r) => assert.deepEqual(r.data, [5, 6, 7]));
      assert.equal(client.stats.errors + client.stats.timeouts, 0);
      this.test.title += ` (${Math.round(n * 1000 / ms)} req/s)`;
    } finally {
      await client.close();
      await sim.close();
      await pty.close();
    }
  });
});

/** A small deterministic PRNG for the fault plan. @param {number} seed @returns {() => number} */
function lcg (seed) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x80000000;
  };
}
