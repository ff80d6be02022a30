'use strict';

/**
 * A job started with where its stream stood (the gateway restarted with a disk spool): numbering
 * goes on, the first interval starts at the last summary's end and counts the gap's slots as
 * skipped, so the subscriber sees one stream, contiguous in seq and in time.
 */

const assert = require('node:assert/strict');
const { WorkerPool } = require('../../gateway/workers/pool');
const { buildDeviceSpec } = require('../../gateway/devices');
const { buildJobSpec } = require('../../gateway/jobs/spec');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');

async function firstSummary (pool) {
  return new Promise((resolve) => pool.once('summary', (job, payload) => resolve(payload)));
}

describe('workers/pool: a job resumes its stream', function () {
  this.timeout(20000);
  let sim;
  let pool;
  beforeEach(async () => { sim = await createModbusTcpSimulator({ port: 0 }); });
  afterEach(async () => {
    if (pool) await pool.stop();
    pool = null;
    await sim.close();
  });

  const start = (resume) => {
    pool = new WorkerPool({ mode: 'inline' });
    const device = buildDeviceSpec({ name: 'plc', target: sim.url, timeoutMs: 500 });
    pool.addDevice(device);
    const got = firstSummary(pool);
    pool.startJob(buildJobSpec({ name: 'hr', read: { fc: 3, address: 0, quantity: 2 }, ratePerSec: 100, intervalMs: 300 }, { device }), resume);
    return got;
  };

  it('numbers on from seq + 1 and starts where the last summary ended, the gap counted as skipped', async () => {
    const end = Date.now() - 2000;
    const p = await start({ seq: 41, end });
    assert.equal(p.seq, 42);
    assert.equal(p.start, end);
    // 2 s at 100/s were not served: skipped, and every slot of the interval is accounted for
    assert.ok(p.skipped >= 195, `skipped ${p.skipped}`);
    const slots = p.ok + p.errors + p.timeouts + p.skipped;
    const intended = (p.end - p.start) * 100 / 1000;
    assert.ok(Math.abs(slots - intended) <= 3, `${slots} slots over ${p.end - p.start} ms at 100/s`);
  });

  it('an end in the future (the clock set back) covers no gap, and the numbering still goes on', async () => {
    const before = Date.now();
    const p = await start({ seq: 7, end: Date.now() + 60000 });
    assert.equal(p.seq, 8);
    assert.ok(p.start >= before - 5, 'the interval starts now, not in the future');
    assert.equal(p.skipped, 0);
  });

  it('without a resume point the stream starts at seq 0', async () => {
    const p = await start(undefined);
    assert.equal(p.seq, 0);
  });
});
