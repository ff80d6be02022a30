'use strict';

// Summaries off the job's thread (issue 20): a job's thread posts each interval as its counts and a
// copy of its histograms' pages, and the pool's thread summarizes it in pieces. The copy must be the
// histogram exactly (so the summary is the one made in one go), must stay right after the job's
// thread recycles its histograms, and what follows a job's summaries (its end, its stop, the pool's)
// must still come after them.

const assert = require('node:assert/strict');
const { Steps } = require('../../gateway/workers/steps');
const { Host } = require('../../gateway/workers/host');
const { WorkerPool } = require('../../gateway/workers/pool');
const { snapshotTransfer, summarizeInPieces } = require('../../gateway/workers/summaries');
const { LoopDelay, loopDelayP99Ms, RING } = require('../../gateway/workers/loop-delay');
const { Recorder, encodeHistogram, summarize } = require('../../gateway/latency');
const { PagedHistogram } = require('../../gateway/latency/paged-histogram');
const { summaryPayload } = require('../../gateway/jobs/payload');
const { buildDeviceSpec, buildJobSpec } = require('../../gateway');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');

const turn = () => new Promise((resolve) => setImmediate(resolve));
const drain = (steps) => new Promise((resolve) => steps.add(resolve));
const META = { job: 'j', target: 'modbus+tcp://x:502', op: 'fc3-0+10', connections: 1, ratePerSec: null };

function filledRecorder (n, spread = 7) {
  const r = new Recorder({ policy: 'closed' });
  for (let i = 0; i < n; i++) r.recordOk(20000 + i * spread, 20000 + i * 5, 300 + (i % 50));
  return r;
}

describe('workers: summaries made on the pool\'s thread from a copy', function () {
  this.timeout(15000);

  it('Steps runs one piece per turn, in order, and goes on after one that throws', async () => {
    const errors = [];
    const steps = new Steps((err) => errors.push(err.message));
    const done = [];
    steps.add(() => done.push(1));
    steps.add(() => { throw new Error('boom'); });
    steps.add(() => done.push(3));
    assert.deepEqual(done, [], 'nothing within add()');
    await turn();
    assert.deepEqual(done, [1], 'one piece per turn');
    while (steps.length) await turn();
    await turn();
    assert.deepEqual(done, [1, 3]);
    assert.deepEqual(errors, ['boom']);
  });

  it('a transfer is the histogram: counts, percentiles and encoding, through a structured clone, at every count width', () => {
    const h = new PagedHistogram();
    for (let i = 0; i < 3000; i++) h.recordValue(1000 + (i * 7919) % 2_000_000);
    h.recordValue(3_600_000_000_000); // the top of the range: a page far from the rest
    for (let i = 0; i < 70000; i++) h.recordValue(25000); // past 16 bits: the pool widened
    assert.equal(h.countBits, 32);
    h.startTimeStampMsec = 1000;
    h.endTimeStampMsec = 2000;
    h.tag = 'response';
    const back = PagedHistogram.fromTransfer(structuredClone(h.toTransfer()));
    assert.equal(back.totalCount, h.totalCount);
    assert.equal(back.countBits, 32);
    assert.deepEqual(summarize(back), summarize(h));
    assert.equal(encodeHistogram(back), encodeHistogram(h));
    for (const p of [0, 50, 99, 99.99, 100]) assert.equal(back.getValueAtPercentile(p), h.getValueAtPercentile(p));
    assert.deepEqual([back.startTimeStampMsec, back.endTimeStampMsec, back.tag], [1000, 2000, 'response']);
    // the copy records on without touching the original
    back.recordValue(5);
    assert.equal(h.totalCount, back.totalCount - 1);
    // many pages touched: the pages cross, as native copies; few: only the non-zero counts
    const dense = h.toTransfer();
    assert.ok(dense.pairs === null && dense.pool instanceof Uint32Array && dense.pages instanceof Int16Array);
    const small = new PagedHistogram();
    for (let i = 0; i < 10; i++) small.recordValue(1e6 + i * 99700);
    const sparse = small.toTransfer();
    assert.equal(sparse.pages, null);
    assert.equal(sparse.pairs.length, 20, 'ten values close together: ten pairs');
    assert.deepEqual(summarize(PagedHistogram.fromTransfer(structuredClone(sparse))), summarize(small));
    // both forms of the same histogram say the same
    assert.equal(encodeHistogram(PagedHistogram.fromTransfer(h.toTransfer(true))), encodeHistogram(h));
    assert.throws(() => PagedHistogram.fromTransfer({ ...sparse, pairs: new Float64Array(3) }), { code: 'NINES_ERR_BAD_HISTOGRAM' });
    assert.throws(() => PagedHistogram.fromTransfer({ ...dense, pool: dense.pool.subarray(1) }), { code: 'NINES_ERR_BAD_HISTOGRAM' });
    assert.throws(() => PagedHistogram.fromTransfer({ ...sparse, pairs: Float64Array.of(1e9, 1) }), { code: 'NINES_ERR_INVALID_ARG' });
  });

  it('a summary made from the copy, after the job\'s thread recycled its histograms, equals the one made in one go', async () => {
    const r = filledRecorder(5000);
    const snap = r.snapshot();
    const whole = summaryPayload({ ...snap }, 0, META, { gateway: 'g', job: 'j' });
    const t = structuredClone(snapshotTransfer(snap));
    r.recycle(snap);
    // the recycled histograms record the next interval while the copy is summarized
    r.recordOk(999, 999, 1);
    const steps = new Steps((err) => { throw err; });
    let made = null;
    summarizeInPieces(steps, t, { ...META }, { gateway: 'g', hlog: true, allHistograms: false }, (s) => { made = s; }, (err) => { throw err; });
    assert.equal(made, null, 'nothing within the call');
    await drain(steps);
    assert.deepEqual(made.payload, whole);
    assert.equal(made.hlog.length, 3);
    assert.equal(made.hlog[0].encoded, whole.hist);
    assert.equal(made.hists, null, 'service and lag go out only when all histograms are asked for');
  });

  it('a copy that is not a histogram ends its summary with a coded error, and the queue goes on', async () => {
    const steps = new Steps((err) => { throw err; });
    const t = snapshotTransfer(filledRecorder(10).snapshot());
    t.lag = { pairs: [], pages: null, pool: null, totalCount: 0 };
    const errors = [];
    const made = [];
    summarizeInPieces(steps, t, { ...META }, { gateway: 'g', hlog: false, allHistograms: false }, (s) => made.push(s), (err) => errors.push(err));
    summarizeInPieces(steps, snapshotTransfer(filledRecorder(10).snapshot()), { ...META }, { gateway: 'g', hlog: false, allHistograms: false }, (s) => made.push(s), (err) => errors.push(err));
    await drain(steps);
    assert.deepEqual(errors.map((e) => e.code), ['NINES_ERR_BAD_HISTOGRAM']);
    assert.equal(made.length, 1);
    assert.equal(made[0].payload.count, 10);
  });

  it('a job\'s thread posts snapshots only: no summary work, and its end after its last one', async () => {
    const sim = await createModbusTcpSimulator({ port: 0 });
    const posted = [];
    const host = new Host({ post: (m) => posted.push(m) });
    try {
      const device = buildDeviceSpec({ name: 'plc', target: sim.url, timeoutMs: 1000 });
      host.handle({ type: 'device', spec: device });
      host.handle({ type: 'job', spec: buildJobSpec({ name: 'j', read: '3:0:10', ratePerSec: 200, count: 40, intervalMs: 100 }, { device }) });
      while (!posted.some((m) => m.type === 'end')) await new Promise((resolve) => setTimeout(resolve, 10));
      const kinds = posted.filter((m) => m.type === 'snapshot' || m.type === 'end').map((m) => m.type);
      assert.equal(kinds.at(-1), 'end');
      assert.ok(kinds.length >= 2);
      const snaps = posted.filter((m) => m.type === 'snapshot');
      assert.equal(snaps.reduce((a, m) => a + m.snap.count, 0), 40, 'every request in a snapshot');
      for (const m of snaps) {
        const r = m.snap.response;
        assert.ok(r.pairs instanceof Float64Array || (r.pool !== null && r.pages instanceof Int16Array), 'counts, not an encoding');
        assert.ok(m.loop instanceof Float32Array, 'the thread\'s loop delay over the interval, as samples');
      }
      assert.ok(!posted.some((m) => m.type === 'summary'));
    } finally {
      await host.stop();
      await sim.close();
    }
  });

  it('a job\'s loop delay is its own interval\'s, whatever other jobs\' summaries did meanwhile', async () => {
    const loop = new LoopDelay();
    try {
      const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
      loop.begin('a');
      loop.begin('b');
      await sleep(50);
      assert.ok(loopDelayP99Ms(loop.since('a')) < 150, 'before the hold');
      const until = Date.now() + 300;
      while (Date.now() < until); // the thread held 300 ms: the next tick is that late
      await sleep(30);
      const held = loopDelayP99Ms(loop.since('a'));
      assert.ok(held >= 250, `a's interval with the hold shows it: ${held} ms`);
      await sleep(200);
      const after = loop.since('a');
      assert.ok(after.length >= 5 && loopDelayP99Ms(after) < 150, `a's next interval does not: ${loopDelayP99Ms(after)} ms`);
      // b's interval spans all of it: the hold is in it, though a took its copies meanwhile
      assert.ok(loopDelayP99Ms(loop.since('b')) >= 250);
      assert.equal(loop.since('b').length, 0, 'nothing since its last copy');
    } finally {
      loop.stop();
    }
  });

  it('loop delay: the samples cross the ring\'s end in order, at most a ring of them, and their p99 is exact', () => {
    const loop = new LoopDelay();
    loop.stop();
    for (let i = 0; i < RING; i++) loop.ring[i] = i;
    loop.written = RING + 10;
    loop.seen.set('w', RING - 5);
    assert.deepEqual([...loop.since('w')], [RING - 5, RING - 4, RING - 3, RING - 2, RING - 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    loop.seen.set('old', 0);
    assert.equal(loop.since('old').length, RING, 'an interval longer than the ring: its last RING samples');
    assert.equal(loopDelayP99Ms(Float32Array.from({ length: 100 }, (_, i) => i + 1)), 0.099, '99th of 1…100 µs');
    assert.equal(loopDelayP99Ms(new Float32Array(0)), 0);
  });

  for (const mode of ['worker', 'inline']) {
    it(`${mode}: every request is in a summary, seq numbered, interval logs encoded, and end and stop come after the summaries`, async () => {
      const sim = await createModbusTcpSimulator({ port: 0 });
      const pool = new WorkerPool({ mode, workers: 1, gateway: 'g', hlog: true });
      const events = [];
      pool.on('summary', (job, payload, hlog) => events.push({ type: 'summary', job, payload, hlog }));
      pool.on('end', (job) => events.push({ type: 'end', job }));
      try {
        const device = buildDeviceSpec({ name: 'plc', target: sim.url, timeoutMs: 1000 });
        pool.addDevice(device);
        pool.startJob(buildJobSpec({ name: 'a', read: '3:0:10', ratePerSec: 400, count: 60, intervalMs: 50 }, { device }));
        pool.startJob(buildJobSpec({ name: 'b', read: '3:0:10', ratePerSec: 400, intervalMs: 50 }, { device }));
        while (!events.some((e) => e.type === 'end')) await new Promise((resolve) => setTimeout(resolve, 10));
        const a = events.filter((e) => e.job === 'a');
        assert.equal(a.at(-1).type, 'end', 'the end after every summary of the job');
        const sums = a.filter((e) => e.type === 'summary');
        assert.equal(sums.reduce((n, e) => n + e.payload.count, 0), 60);
        assert.deepEqual(sums.map((e) => e.payload.seq), sums.map((_, i) => i));
        assert.equal(sums[0].payload.first, true);
        for (const e of sums) {
          assert.equal(e.payload.gateway, 'g');
          assert.equal(e.hlog.length, 3);
          assert.equal(e.hlog[0].encoded, e.payload.hist);
          assert.ok(e.payload.loopDelayP99 >= 0 && e.payload.loopDelayP99 < 1000, `loop delay in ms: ${e.payload.loopDelayP99}`);
        }
        const before = events.filter((e) => e.job === 'b').length;
        await pool.stopJob('b');
        const b = events.filter((e) => e.job === 'b');
        assert.ok(b.length > before, 'stopJob resolves after the stopped job\'s last summary');
      } finally {
        await pool.stop();
        await sim.close();
      }
    });
  }
});
