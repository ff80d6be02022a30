'use strict';

/**
 * The pause test (latency-method.md rule 10, Gil Tene's ^Z test) against the real ED-588 simulator
 * over TCP: stall the device for S during a fixed-rate run. If the tool does not coordinate with the
 * stall, the reported max is about S, and when the stall covers half the run, p90 is about 0.8·S.
 * The catch-up policies change the arithmetic in ways we can predict, and the test checks those too.
 */

const assert = require('node:assert/strict');
const { startSchedule } = require('../../gateway/scheduler');
const { Recorder, summarize } = require('../../gateway/latency');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const { AsciiClient } = require('../../gateway/drivers/ascii');

const RATE = 200; // per second
const RUN_MS = 2000;
const STALL_MS = 1000; // from 500 ms to 1500 ms: half the run

async function pauseRun (policy) {
  const sim = await createAsciiSimulator({ port: 0 });
  const client = new AsciiClient(sim.url, { timeoutMs: 3 * STALL_MS });
  try {
    await client.connect();
    const rec = new Recorder({ policy });
    const run = startSchedule({ clients: [client], nextOp: () => '@01', ratePerSec: RATE, durationMs: RUN_MS, policy, timeoutMs: 3 * STALL_MS, recorder: rec, startDelayMs: 20 });
    setTimeout(() => sim.faults.stall(STALL_MS), 20 + RUN_MS / 4);
    const out = await run.done;
    const snap = rec.snapshot();
    return { out, snap, s: summarize(snap.response) };
  } finally {
    await client.close();
    await sim.close();
  }
}

describe('the pause test (rule 10) on the ASCII simulator', function () {
  this.timeout(20000);

  it('burst: max ≈ S and p90 ≈ 0.8·S when the stall covers half the run', async () => {
    const { snap, s } = await pauseRun('burst');
    assert.equal(snap.ok, RUN_MS * RATE / 1000, 'every planned request answered');
    assert.equal(snap.timeouts + snap.errors, 0);
    const S = STALL_MS;
    assert.ok(s.max >= 0.9 * S && s.max <= 1.3 * S, `max ${s.max} ms, expected ≈ ${S}`);
    assert.ok(s.p90 >= 0.7 * S && s.p90 <= 0.92 * S, `p90 ${s.p90} ms, expected ≈ ${0.8 * S}`);
    assert.ok(s.p50 < 0.25 * S, `p50 ${s.p50} ms: the unstalled half stays fast`);
    // service time from the actual send does NOT see the queue: only the first stalled request waits
    const svc = summarize(snap.service);
    assert.ok(svc.p90 < 0.1 * S, `service p90 ${svc.p90} ms`);
  });

  it('capped: catching up at 2x the rate stretches the damage, p90 ≈ 0.9·S', async () => {
    const { snap, s } = await pauseRun('capped');
    assert.equal(snap.ok, RUN_MS * RATE / 1000);
    // requests intended from 0.5 s to the end (3/4 of them) are still behind their plan; their
    // response times fall linearly from S to S/4 (see the test's notes in the file header)
    assert.ok(s.max >= 0.9 * STALL_MS && s.max <= 1.3 * STALL_MS, `max ${s.max}`);
    assert.ok(s.p90 >= 0.82 * STALL_MS && s.p90 <= 1.05 * STALL_MS, `p90 ${s.p90} ms, expected ≈ ${0.9 * STALL_MS}`);
    assert.ok(s.p50 >= 0.3 * STALL_MS, `p50 ${s.p50} ms: most requests were behind`);
  });

  it('skip: missed slots are counted as skipped and recorded with what they waited', async () => {
    const { snap, s } = await pauseRun('skip');
    const planned = RUN_MS * RATE / 1000;
    assert.equal(snap.ok + snap.skipped, planned, 'sent plus skipped is the plan');
    assert.ok(snap.skipped >= 0.8 * STALL_MS * RATE / 1000, `skipped ${snap.skipped}`);
    assert.ok(s.max >= 0.9 * STALL_MS && s.max <= 1.3 * STALL_MS, `max ${s.max}`);
    assert.ok(s.p90 >= 0.7 * STALL_MS && s.p90 <= 0.92 * STALL_MS, `p90 ${s.p90}`);
  });
});
