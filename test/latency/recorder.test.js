'use strict';

const assert = require('node:assert/strict');
const { Worker } = require('node:worker_threads');
const { Recorder, POLICIES, encodeSnapshot, decodeSnapshot, mergeSnapshots } = require('../../gateway/latency/recorder');
const { createHistogram, recordNs } = require('../../gateway/latency/histogram');
const { summarize } = require('../../gateway/latency/summary');
const { latencies, throwsCode } = require('./support/helpers');

const MS = 1e6;

/** @returns {{nowMs: () => number, t: number}} a clock the test moves */
function manualClock (t = 1700000000000) {
  const clock = { t, nowMs: () => clock.t };
  return clock;
}

describe('latency/recorder: Recorder', () => {
  it('counts ok, errors, timeouts and skipped and records each into the right histograms', () => {
    const r = new Recorder({ clock: manualClock() });
    r.recordOk(2 * MS, 1 * MS, 10000);
    r.recordOk(3 * MS, 2 * MS, 20000n);
    r.recordError(4 * MS, 3 * MS, 30000);
    r.recordTimeout(1000 * MS, 999 * MS, 40000);
    r.recordSkipped(500 * MS);
    const s = r.snapshot();
    assert.deepEqual([s.count, s.ok, s.errors, s.timeouts, s.skipped, s.clamped, s.invalid], [5, 2, 1, 1, 1, 0, 0]);
    assert.equal(s.response.totalCount, 5, 'skipped slots count in the response histogram');
    assert.equal(s.service.totalCount, 4);
    assert.equal(s.lag.totalCount, 4);
    assert.equal(s.response.getValueAtPercentile(100), s.response.highestEquivalentValue(1000 * MS), 'a timeout is a sample at its timeout');
    assert.equal(s.policy, 'capped');
  });

  it('counts values above 1 h as clamped and refused values as invalid, per value', () => {
    const r = new Recorder({ clock: manualClock() });
    r.recordOk(5e12, 4e12, 1000);
    r.recordOk(NaN, 1.5, -1);
    r.recordOk(1000, undefined, 1000);
    const s = r.snapshot();
    assert.equal(s.ok, 3);
    assert.equal(s.clamped, 2);
    assert.equal(s.invalid, 4, 'NaN, 1.5, -1 and a missing service time');
    assert.equal(s.response.totalCount, 2);
  });

  it('treats missing service and lag times of errors and timeouts as not measured', () => {
    const r = new Recorder({ clock: manualClock() });
    r.recordError(3 * MS);
    r.recordTimeout(1000 * MS, undefined, 500);
    const s = r.snapshot();
    assert.equal(s.invalid, 0);
    assert.equal(s.response.totalCount, 2);
    assert.equal(s.service.totalCount, 0);
    assert.equal(s.lag.totalCount, 1);
  });

  it('numbers snapshots from 0 and chains each start to the previous end', () => {
    const clock = manualClock();
    const r = new Recorder({ clock });
    const snaps = [];
    for (let i = 0; i < 5; i++) {
      r.recordOk(MS, MS, 1);
      clock.t += 10000;
      snaps.push(r.snapshot());
    }
    assert.deepEqual(snaps.map((s) => s.seq), [0, 1, 2, 3, 4]);
    assert.equal(snaps[0].startMs, 1700000000000);
    for (let i = 1; i < snaps.length; i++) assert.equal(snaps[i].startMs, snaps[i - 1].endMs);
    for (const s of snaps) assert.equal(s.count, 1, 'each interval holds only its own samples');
  });

  it('holds the end at the start when the wall clock steps back', () => {
    const clock = manualClock();
    const r = new Recorder({ clock });
    clock.t -= 5000;
    const s = r.snapshot();
    assert.equal(s.endMs, s.startMs);
  });

  it('keeps a snapshot valid while later intervals are recorded until it is recycled', () => {
    const clock = manualClock();
    const r = new Recorder({ clock });
    r.recordOk(7 * MS, MS, 1);
    const first = r.snapshot();
    const before = summarize(first.response);
    for (let i = 0; i < 3; i++) {
      r.recordOk(100 * MS, MS, 1);
      r.snapshot();
    }
    assert.deepEqual(summarize(first.response), before);
    r.recycle(first);
    assert.equal(first.response, null);
    assert.equal(first.count, 1, 'counts stay');
  });

  it('reuses recycled histograms for the next interval instead of allocating', () => {
    const r = new Recorder({ clock: manualClock() });
    r.recordOk(7 * MS, MS, 1);
    const a = r.snapshot();
    const histograms = [a.response, a.service, a.lag];
    r.recycle(a);
    const b = r.snapshot();
    r.recordOk(9 * MS, MS, 1);
    const c = r.snapshot();
    assert.deepEqual([c.response, c.service, c.lag], histograms);
    assert.equal(c.response.totalCount, 1, 'reset before reuse');
    assert.equal(c.response.getValueAtPercentile(100), c.response.highestEquivalentValue(9 * MS));
    assert.notEqual(b.response, a.response);
  });

  it('discard() starts the open interval afresh in the same histograms: not handed over, not in the totals', () => {
    const clock = manualClock();
    const r = new Recorder({ clock });
    r.recordOk(7 * MS, MS, 1);
    r.recordTimeout(1e13, 1, 1);
    const before = r.snapshot();
    r.recordOk(5 * MS, MS, 1);
    r.recordError(MS);
    const held = r._set;
    clock.t += 1000;
    r.discard();
    assert.equal(r._set, held, 'the same histograms record on');
    r.recordOk(9 * MS, 2 * MS, 1);
    clock.t += 500;
    const after = r.snapshot();
    assert.equal(after.seq, before.seq + 1, 'a discarded interval takes no seq');
    assert.equal(after.startMs, before.endMs + 1000, 'the interval starts at the discard');
    assert.deepEqual([after.count, after.ok, after.errors, after.timeouts, after.clamped], [1, 1, 0, 0, 0]);
    assert.equal(after.response.totalCount, 1);
    assert.equal(after.response.getValueAtPercentile(100), after.response.highestEquivalentValue(9 * MS));
    assert.equal(r.totals().count, 3, 'what was discarded is not counted');
  });

  it('refuses to recycle a snapshot twice, a foreign one, or a merged one', () => {
    const r = new Recorder({ clock: manualClock() });
    const other = new Recorder({ clock: manualClock() });
    const s = r.snapshot();
    throwsCode(() => other.recycle(s), 'NINES_ERR_INVALID_ARG', /not yet recycled/);
    r.recycle(s);
    throwsCode(() => r.recycle(s), 'NINES_ERR_INVALID_ARG');
    throwsCode(() => r.recycle(mergeSnapshots([r.snapshot()])), 'NINES_ERR_INVALID_ARG');
    throwsCode(() => summarize(s.response), 'NINES_ERR_INVALID_ARG');
  });

  it('keeps totals since creation, the open interval included', () => {
    const clock = manualClock();
    const r = new Recorder({ clock, policy: 'burst' });
    r.recordOk(MS, MS, 1);
    r.recordTimeout(1e13, 1, 1);
    r.snapshot();
    r.recordError(MS);
    r.recordSkipped(MS);
    assert.deepEqual(r.totals(), {
      startMs: 1700000000000, snapshots: 1, policy: 'burst', count: 4, ok: 1, errors: 1, timeouts: 1, skipped: 1, clamped: 1, invalid: 0
    });
  });

  it('validates its options', () => {
    assert.deepEqual(POLICIES, ['burst', 'capped', 'skip', 'closed']);
    throwsCode(() => new Recorder({ policy: 'fast' }), 'NINES_ERR_INVALID_ARG', /options.policy must be one of "burst", "capped", "skip", "closed"/);
    throwsCode(() => new Recorder({ clock: Date.now }), 'NINES_ERR_INVALID_ARG', /options.clock/);
    throwsCode(() => new Recorder({ clock: { nowMs: () => NaN } }), 'NINES_ERR_INVALID_ARG', /clock.nowMs\(\)/);
    throwsCode(() => new Recorder(5), 'NINES_ERR_INVALID_ARG');
    assert.throws(() => { 'use strict'; new Recorder().policy = 'bogus'; }, TypeError, 'the policy is fixed');
    const before = Date.now();
    const s = new Recorder().snapshot();
    assert.ok(s.startMs >= before && s.endMs <= Date.now(), 'defaults to the wall clock');
  });
});

describe('latency/recorder: snapshots on the wire and merged', () => {
  function filled (seed, clock) {
    const r = new Recorder({ clock });
    for (const v of latencies(2000, seed)) r.recordOk(v, Math.floor(v / 2), 5000);
    r.recordTimeout(1000 * MS, 1000 * MS, 1);
    clock.t += 10000;
    return r.snapshot();
  }

  it('round-trips through JSON with the same counts and statistics', () => {
    const snap = filled(31, manualClock());
    const wire = JSON.parse(JSON.stringify(encodeSnapshot(snap)));
    assert.equal(typeof wire.response, 'string');
    const back = decodeSnapshot(wire);
    for (const k of ['seq', 'startMs', 'endMs', 'count', 'ok', 'errors', 'timeouts', 'skipped', 'clamped', 'invalid', 'policy']) {
      assert.equal(back[k], snap[k], k);
    }
    for (const k of ['response', 'service', 'lag']) assert.deepEqual(summarize(back[k]), summarize(snap[k]));
  });

  it('crosses a worker thread as plain data', async () => {
    const wire = encodeSnapshot(filled(32, manualClock()));
    const worker = new Worker('const { parentPort } = require("node:worker_threads"); parentPort.once("message", (m) => parentPort.postMessage(m));', { eval: true });
    const echoed = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.postMessage(wire);
    });
    await worker.terminate();
    assert.deepEqual(echoed, wire);
    assert.equal(decodeSnapshot(echoed).count, 2001);
  });

  it('rejects a malformed wire snapshot with the field named', () => {
    const wire = encodeSnapshot(filled(33, manualClock()));
    throwsCode(() => decodeSnapshot({ ...wire, v: 0 }), 'NINES_ERR_INVALID_ARG', /snapshot.v/);
    throwsCode(() => decodeSnapshot({ ...wire, ok: -1 }), 'NINES_ERR_INVALID_ARG', /snapshot.ok must be an integer >= 0/);
    throwsCode(() => decodeSnapshot({ ...wire, count: 1 }), 'NINES_ERR_INVALID_ARG', /snapshot.count/);
    throwsCode(() => decodeSnapshot({ ...wire, endMs: wire.startMs - 1 }), 'NINES_ERR_INVALID_ARG', /snapshot.endMs/);
    throwsCode(() => decodeSnapshot({ ...wire, lag: 'HISTF' }), 'NINES_ERR_BAD_HISTOGRAM');
    throwsCode(() => decodeSnapshot({ ...wire, count: 3, ok: 3, timeouts: 0 }), 'NINES_ERR_INVALID_ARG', /snapshot.response/);
    throwsCode(() => encodeSnapshot({ seq: 0 }), 'NINES_ERR_INVALID_ARG');
  });

  it('merges snapshots by adding counts and histograms, spanning earliest start to latest end', () => {
    const clock = manualClock();
    const a = filled(34, clock);
    const b = filled(35, clock);
    const skip = new Recorder({ clock, policy: 'skip' });
    skip.recordSkipped(3 * MS);
    clock.t += 5000;
    const c = skip.snapshot();
    const merged = mergeSnapshots([b, decodeSnapshot(encodeSnapshot(a)), c]);
    assert.equal(merged.count, a.count + b.count + c.count);
    assert.equal(merged.timeouts, 2);
    assert.equal(merged.skipped, 1);
    assert.equal(merged.startMs, a.startMs);
    assert.equal(merged.endMs, c.endMs);
    assert.equal(merged.seq, 0);
    assert.equal(merged.policy, 'mixed');
    const union = createHistogram();
    for (const v of [...latencies(2000, 34), ...latencies(2000, 35)]) recordNs(union, v);
    recordNs(union, 1000 * MS);
    recordNs(union, 1000 * MS);
    recordNs(union, 3 * MS);
    for (const p of [50, 90, 99, 99.9, 100]) assert.equal(merged.response.getValueAtPercentile(p), union.getValueAtPercentile(p));
    assert.equal(mergeSnapshots([a, b]).policy, 'capped');
    throwsCode(() => mergeSnapshots([]), 'NINES_ERR_INVALID_ARG', /non-empty array/);
    throwsCode(() => mergeSnapshots([a, { ...b, response: null }]), 'NINES_ERR_INVALID_ARG', /list\[1\].response/);
  });
});
