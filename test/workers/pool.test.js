'use strict';

/**
 * The pool hosts devices and the jobs that poll them: a device keeps its connection count whoever
 * polls it, jobs on one connection get fair shares, on-demand requests go through the same
 * connections, and a crashed worker comes back with its devices and jobs, seq contiguous.
 */

const assert = require('node:assert/strict');
const { WorkerPool } = require('../../gateway/workers/pool');
const { buildDeviceSpec } = require('../../gateway/devices');
const { buildJobSpec } = require('../../gateway/jobs/spec');
const { createModbusTcpSimulator, createModbusRtuSimulator } = require('../../gateway/simulators/modbus');
const { createPtyPair } = require('../helpers/pty');
const { until } = require('../helpers/wait');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe('workers/pool: devices own their connections, jobs share them', function () {
  this.timeout(30000);
  let sim;
  let pool;
  beforeEach(async () => { sim = await createModbusTcpSimulator({ port: 0 }); });
  afterEach(async () => {
    if (pool) await pool.stop();
    pool = null;
    await sim.close();
  });

  for (const mode of ['worker', 'inline']) {
    it(`${mode}: 10 jobs on a device with maxConnections 1 make one connection, fair shares and contiguous seq`, async () => {
      pool = new WorkerPool({ mode, workers: 1 });
      const device = buildDeviceSpec({ name: 'plc', target: sim.url, maxConnections: 1, timeoutMs: 1000 });
      const summaries = new Map();
      pool.on('summary', (job, p) => { if (!summaries.has(job)) summaries.set(job, []); summaries.get(job).push(p); });
      pool.addDevice(device);
      const RATE = 20;
      for (let i = 0; i < 10; i++) {
        pool.startJob(buildJobSpec({ name: `j${i}`, read: { fc: 3, address: i, quantity: 2 }, ratePerSec: RATE, intervalMs: 400 }, { device }));
      }
      await sleep(3000);
      assert.equal(sim.stats.connections, 1, 'one connection for ten jobs');
      await pool.stop();
      pool = null;
      for (let i = 0; i < 10; i++) {
        const list = summaries.get(`j${i}`);
        assert.ok(list && list.length >= 5, `j${i} summaries: ${list && list.length}`);
        assert.deepEqual(list.map((p) => p.seq), list.map((_, k) => k), 'seq contiguous from 0');
        // the last summary is the partial interval flushed at stop: judge the whole intervals
        const whole = list.slice(1, -1);
        const ok = whole.reduce((a, p) => a + p.ok, 0);
        const seconds = whole.reduce((a, p) => a + (p.end - p.start) / 1000, 0);
        const rate = ok / seconds;
        assert.ok(Math.abs(rate - RATE) <= 0.1 * RATE, `j${i} got ${rate.toFixed(1)}/s of ${RATE}/s`);
        assert.equal(list.reduce((a, p) => a + p.errors + p.timeouts, 0), 0);
        assert.equal(list[0].policy, 'skip');
      }
    });
  }

  for (const mode of ['worker', 'inline']) {
    it(`${mode}: reset(job) starts that job's interval afresh and leaves the others' alone; reset() starts every job's`, async () => {
      const device = buildDeviceSpec({ name: 'plc', target: sim.url, timeoutMs: 1000 });
      // three jobs of one-hour intervals: each one's only summary comes at stop, starting at its last reset
      const run = async (reset) => {
        pool = new WorkerPool({ mode, workers: 1 });
        const firsts = new Map();
        pool.on('summary', (job, p) => { if (!firsts.has(job)) firsts.set(job, p); });
        pool.addDevice(device);
        const startedAt = Date.now();
        for (const name of ['a', 'b', 'c']) pool.startJob(buildJobSpec({ name, read: { fc: 3, address: 0, quantity: 2 }, ratePerSec: 50, intervalMs: 3600000 }, { device }));
        await sleep(500);
        const resetAt = Date.now();
        reset();
        await sleep(300);
        const stopAt = Date.now();
        await pool.stop();
        pool = null;
        assert.deepEqual([...firsts.keys()].sort(), ['a', 'b', 'c']);
        // at 50/s, what a job can have sent between its reset and the stop, whatever the timers did
        const afterReset = Math.ceil(50 * (Date.now() - resetAt) / 1000) + 1;
        assert.ok(stopAt - resetAt >= 300);
        return { startedAt, resetAt, firsts, afterReset };
      };
      const one = await run(() => pool.reset('b'));
      const b = one.firsts.get('b');
      assert.ok(b.start >= one.resetAt - 5, `b starts at its reset: ${b.start - one.resetAt} ms`);
      assert.ok(b.count > 0 && b.count <= one.afterReset, `b counts what came after its reset only: ${b.count} of at most ${one.afterReset}`);
      for (const name of ['a', 'c']) {
        const p = one.firsts.get(name);
        assert.ok(p.start < one.resetAt - 300, `${name} keeps its interval: starts ${one.resetAt - p.start} ms before b's reset`);
        assert.ok(p.count > b.count, `${name} counted more than b: ${p.count} vs ${b.count}`);
      }
      const all = await run(() => pool.reset());
      for (const [name, p] of all.firsts) {
        assert.ok(p.start >= all.resetAt - 5 && p.count > 0 && p.count <= all.afterReset, `${name} starts at reset(): ${p.start - all.resetAt} ms, ${p.count} of at most ${all.afterReset} requests`);
      }
    });
  }

  it('an on-demand request goes over the device\'s connection, served beside its jobs, Buffers intact', async () => {
    pool = new WorkerPool({ workers: 1 });
    const device = buildDeviceSpec({ name: 'plc', target: sim.url });
    pool.addDevice(device);
    pool.startJob(buildJobSpec({ name: 'poll', read: '3:0:4', ratePerSec: 50, intervalMs: 1000 }, { device }));
    await pool.request('plc', { fc: 6, address: 3, value: 4242 });
    const reply = await pool.request('plc', { fc: 3, address: 0, quantity: 4 }, { user: 'node-1' });
    assert.equal(reply.data[3], 4242);
    assert.ok(Buffer.isBuffer(reply.buffer) && Buffer.isBuffer(reply.raw));
    assert.equal(typeof reply.sentNs, 'bigint');
    assert.equal(sim.stats.connections, 1);
    await assert.rejects(pool.request('nope', { fc: 3, address: 0, quantity: 1 }), { code: 'NINES_ERR_INVALID_ARG' });
  });

  it('a device is counted by its users: the last one out closes its connection', async () => {
    pool = new WorkerPool({ workers: 1 });
    const device = buildDeviceSpec({ name: 'plc', target: sim.url });
    pool.addDevice(device);
    pool.addDevice(device);
    await pool.request('plc', '3:0:1');
    pool.removeDevice('plc');
    await pool.request('plc', '3:0:1');
    pool.removeDevice('plc');
    await until(() => sim.stats.open === 0, 'the connection to close', 5000);
    assert.equal(sim.stats.connections, 1);
  });

  it('health follows the device: connecting, up, down when it goes away, up again when it is back', async () => {
    pool = new WorkerPool({ workers: 1 });
    const port = sim.port;
    const device = buildDeviceSpec({ name: 'plc', target: sim.url, backoff: { initialMs: 50, maxMs: 200 }, timeoutMs: 300 });
    const states = [];
    pool.on('health', (name, h) => states.push(h.state));
    pool.addDevice(device);
    await until(() => states.includes('up'), 'up', 5000);
    await sim.close();
    await until(() => states[states.length - 1] === 'down', 'down', 5000);
    assert.equal(pool.health('plc').state, 'down');
    assert.ok(pool.health('plc').lastError.code.startsWith('NINES_ERR_'));
    await assert.rejects(pool.request('plc', '3:0:1'), { code: 'NINES_ERR_NOT_CONNECTED' });
    sim = await createModbusTcpSimulator({ port });
    await until(() => states[states.length - 1] === 'up', 'up again', 5000);
    await pool.request('plc', '3:0:1');
  });

  it('a killed worker comes back with its devices and jobs; seq stays contiguous and the gap is covered and counted', async () => {
    pool = new WorkerPool({ workers: 1 });
    const device = buildDeviceSpec({ name: 'plc', target: sim.url });
    const seqs = [];
    const exits = [];
    const summaries = [];
    pool.on('summary', (job, p) => { seqs.push(p.seq); summaries.push(p); });
    pool.on('worker-exit', (info) => exits.push(info));
    pool.addDevice(device);
    pool.startJob(buildJobSpec({ name: 'poll', read: '3:0:1', ratePerSec: 50, intervalMs: 200 }, { device }));
    await until(() => seqs.length >= 2, 'two summaries', 5000);
    await pool.killWorker(0);
    await until(() => exits.length === 1, 'the exit report', 5000);
    assert.deepEqual(exits[0].devices, ['plc']);
    assert.deepEqual(exits[0].jobs, ['poll']);
    const before = seqs.length;
    await until(() => seqs.length >= before + 2, 'summaries after the restart');
    assert.deepEqual(seqs, seqs.map((_, i) => i));
    // no time is left out: each summary starts where the one before ended, across the restart
    for (let i = 1; i < summaries.length; i++) assert.equal(summaries[i].start, summaries[i - 1].end, `summary ${i}`);
    // the slots intended while no worker ran are counted: the restart waits at least 250 ms (500 ms
    // with equal jitter), 12 slots at 50/s
    const after = summaries[before];
    assert.ok(after.skipped >= 10, `skipped ${after.skipped} in the summary after the restart`);
  });

  it('a serial device lives on the caller\'s thread: serialport cannot run in a worker (it aborted the process), and it polls', async () => {
    const pty = await createPtyPair();
    const rtu = await createModbusRtuSimulator({ path: pty.a, baudRate: 115200 });
    try {
      rtu.model.setRegister('holdingRegisters', 0, 4321);
      pool = new WorkerPool({ mode: 'worker', workers: 1 });
      pool.addDevice(buildDeviceSpec({ name: 'bus', target: `modbus+rtu://${pty.b}?baudRate=115200`, timeoutMs: 500 }));
      // no thread for it: the serial host is the caller's
      assert.equal(pool.threads, 0);
      const reply = await pool.request('bus', { fc: 3, address: 0, quantity: 1 });
      assert.deepEqual(reply.data, [4321]);
      const summaries = [];
      pool.on('summary', (job, p) => summaries.push(p));
      const device = buildDeviceSpec({ name: 'bus', target: `modbus+rtu://${pty.b}?baudRate=115200`, timeoutMs: 500 });
      pool.startJob(buildJobSpec({ name: 'r', read: '3:0:1', ratePerSec: 50, intervalMs: 200 }, { device }));
      await until(() => summaries.some((p) => p.ok > 0), 'an answered poll of the serial device', 5000);
      await pool.stopJob('r');
      pool.removeDevice('bus');
    } finally {
      if (pool) { await pool.stop(); pool = null; }
      await rtu.close();
      await pty.close();
    }
  });
});
