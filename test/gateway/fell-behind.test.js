'use strict';

/**
 * A gateway job whose interval did not hold its fixed rate says so in its summary (`fellBehind`),
 * by the same 95 % rule as the probe and the sweep, and `nines run`'s table shows it. The job that
 * cannot keep up polls a device made slow by the simulator's latency fault, so a busy machine only
 * makes it slower; the held cases are judged on recorded snapshots, without timing luck.
 */

const assert = require('node:assert/strict');
const { WorkerPool } = require('../../gateway/workers/pool');
const { buildDeviceSpec } = require('../../gateway/devices');
const { buildJobSpec } = require('../../gateway/jobs/spec');
const { summaryPayload, intervalFellBehind } = require('../../gateway/jobs/payload');
const { fellBehind, HELD_FRACTION } = require('../../gateway/latency/outcome');
const { saturationIndex } = require('../../gateway/measure/sweep');
const { Recorder } = require('../../gateway/latency');
const { renderTable, summaryLine } = require('../../gateway/cli/table');
const { startChildSim } = require('../helpers/child-sim');

/** A snapshot of `sent` answered requests (and `skipped` slots) over [startMs, endMs] */
function snapshot ({ startMs = 0, endMs, sent, skipped = 0 }) {
  let now = startMs;
  const r = new Recorder({ policy: 'skip', clock: { nowMs: () => now } });
  for (let i = 0; i < sent; i++) r.recordOk(1e6, 1e6, 1e4);
  for (let i = 0; i < skipped; i++) r.recordSkipped(2e6);
  now = endMs;
  return r.snapshot();
}

const META = { target: 'ascii://127.0.0.1:9500', op: '@AA', connections: 1 };

describe('fell behind: the 95 % rule', () => {
  it('is the sweep\'s saturation rule', () => {
    assert.equal(HELD_FRACTION, 0.95);
    assert.equal(fellBehind(95, 100), false);
    assert.equal(fellBehind(94.9, 100), true);
    assert.equal(fellBehind(0, 100), true);
    assert.equal(fellBehind(10, null), false, 'closed loop');
    assert.equal(fellBehind(10, Infinity), false, 'closed loop');
    const step = (offered, achieved) => ({ offered, achieved, p99: 1 });
    assert.equal(saturationIndex([step(100, 95), step(200, 189.9)]), 1);
  });
});

describe('fell behind: gateway summaries', () => {
  it('flags an interval that sent less than 95 % of its rate, and not one that held it', () => {
    const meta = { ...META, ratePerSec: 100 };
    const behind = summaryPayload(snapshot({ endMs: 1000, sent: 80 }), 3, meta, { gateway: 'g', job: 'j' });
    assert.equal(behind.fellBehind, true);
    assert.equal(behind.offered, 100);
    assert.equal(behind.rate, 80);
    assert.equal(summaryPayload(snapshot({ endMs: 1000, sent: 99 }), 3, meta, { gateway: 'g', job: 'j' }).fellBehind, false);
    // one request per lane may be in flight across each edge of the interval: not a shortfall
    assert.equal(intervalFellBehind(snapshot({ endMs: 1000, sent: 94 }), meta), false);
    assert.equal(intervalFellBehind(snapshot({ endMs: 1000, sent: 93 }), meta), true);
    assert.equal(intervalFellBehind(snapshot({ endMs: 1000, sent: 91 }), { ...meta, connections: 4 }), false);
  });

  it('counts what was sent: slots skipped under the skip policy are not an achieved rate', () => {
    const p = summaryPayload(snapshot({ endMs: 1000, sent: 50, skipped: 50 }), 0, { ...META, ratePerSec: 100 }, { gateway: 'g', job: 'j' });
    assert.equal(p.count, 100);
    assert.equal(p.skipped, 50);
    assert.equal(p.fellBehind, true);
  });

  it('judges a first interval from when the job began sending, and a resumed one in full', () => {
    const snap = snapshot({ startMs: 0, endMs: 1000, sent: 60 });
    const meta = { ...META, ratePerSec: 100 };
    assert.equal(intervalFellBehind(snap, { ...meta, sendingSinceMs: 400 }), false, 'connecting took 400 ms: 60 in 600 ms');
    assert.equal(intervalFellBehind(snap, { ...meta, sendingSinceMs: 100 }), true, '60 in 900 ms');
    assert.equal(intervalFellBehind(snap, { ...meta, sendingSinceMs: null }), false, 'not sending yet');
    assert.equal(intervalFellBehind(snap, { ...meta, sendingSinceMs: 2000 }), false, 'began after the interval');
    assert.equal(intervalFellBehind(snap, meta), true, 'unknown start (a resumed job): the whole interval');
  });

  it('does not judge an interval too short to tell, nor a closed loop', () => {
    const meta = { ...META, ratePerSec: 100 };
    assert.equal(intervalFellBehind(snapshot({ endMs: 50, sent: 0 }), meta), false, '50 ms');
    assert.equal(intervalFellBehind(snapshot({ endMs: 1000, sent: 0 }), { ...meta, ratePerSec: 4 }), false, '4 slots');
    assert.equal(intervalFellBehind(snapshot({ endMs: 2000, sent: 0 }), { ...meta, ratePerSec: 4 }), true, '8 slots, none sent');
    const closed = summaryPayload(snapshot({ endMs: 1000, sent: 3 }), 0, { ...META, ratePerSec: null }, { gateway: 'g', job: 'j' });
    assert.equal(closed.fellBehind, false);
  });

  it('shows in nines run\'s table and plain lines', () => {
    const meta = { ...META, ratePerSec: 100 };
    const behind = summaryPayload(snapshot({ endMs: 1000, sent: 80 }), 1, meta, { gateway: 'g', job: 'slow' });
    const held = summaryPayload(snapshot({ endMs: 1000, sent: 100 }), 1, meta, { gateway: 'g', job: 'fast' });
    const [head, a, b] = renderTable([behind, held]).split('\n');
    const col = head.split(/ {2,}/).indexOf('held');
    assert.ok(col > 0, head);
    assert.equal(a.trim().split(/ {2,}/)[col], 'FELL BEHIND');
    assert.equal(b.trim().split(/ {2,}/)[col], 'yes');
    assert.match(summaryLine(behind), / FELL BEHIND: 80\/s of 100\/s offered$/);
    assert.doesNotMatch(summaryLine(held), /FELL BEHIND/);
    // every slot of the interval is in the line: count = ok + errors + timeouts + skipped
    const m = /count=(\d+) ok=(\d+) errors=(\d+) timeouts=(\d+) skipped=(\d+) /.exec(summaryLine(behind));
    assert.ok(m, summaryLine(behind));
    assert.equal(Number(m[1]), Number(m[2]) + Number(m[3]) + Number(m[4]) + Number(m[5]));
    assert.doesNotMatch(renderTable([{ ...held, fellBehind: undefined }]), /held/, 'rows without the flag (a fleet merge) get no column');
  });
});

describe('fell behind: a gateway job in inline mode', function () {
  this.timeout(30000);
  let slow;
  before(async () => { slow = await startChildSim('ascii', ['--faults', 'latency=10ms']); });
  after(async () => { if (slow) await slow.stop(); });

  it('flags the summaries of a job polling faster than its device answers', async () => {
    const pool = new WorkerPool({ mode: 'inline', workers: 1, gateway: 'gw' });
    const device = buildDeviceSpec({ name: 'slow', target: slow.url, timeoutMs: 2000 });
    const summaries = [];
    const two = new Promise((resolve) => pool.on('summary', (job, payload) => { summaries.push(payload); if (summaries.length === 3) resolve(); }));
    try {
      pool.addDevice(device);
      // 200/s on one connection to a device that takes 10 ms per request: at most 100/s
      pool.startJob(buildJobSpec({ name: 'too-fast', command: '@01', ratePerSec: 200, connections: 1, intervalMs: 400 }, { device }));
      await two;
    } finally {
      await pool.stop();
    }
    // the first interval may be cut short by the job's phase; the next ones are whole
    const whole = summaries.slice(1, 3);
    for (const p of whole) {
      assert.equal(p.offered, 200);
      assert.ok(p.rate < 0.95 * 200, `rate ${p.rate}`);
      assert.equal(p.fellBehind, true, `seq ${p.seq}: rate ${p.rate}/s, skipped ${p.skipped}`);
      assert.ok(p.skipped > 0, 'the poll job\'s skip policy counts the slots it could not send');
    }
    assert.match(renderTable(whole), /FELL BEHIND/);
  });
});
