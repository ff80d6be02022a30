'use strict';

const assert = require('node:assert/strict');
const hdr = require('hdr-histogram-js');
const {
  createHistogram, createAccumulator, recordNs, mergeInto, encodeHistogram, decodeHistogram
} = require('../../gateway/latency/histogram');
const { summarize, latencyPayload, parseLatencyPayload, STAT_FIELDS } = require('../../gateway/latency/summary');
const { Recorder } = require('../../gateway/latency/recorder');
const { latencies, throwsCode } = require('./support/helpers');

const MS = 1e6;
const META = { gateway: 'edge-1', job: 'ed588-inputs', target: 'ascii://127.0.0.1:9500', op: '@01' };

/** @returns {{nowMs: () => number, t: number}} a clock the test moves */
function manualClock (t = 1700000000000) {
  const clock = { t, nowMs: () => clock.t };
  return clock;
}

/** A 10 s snapshot with some of everything. */
function busySnapshot () {
  const clock = manualClock();
  const r = new Recorder({ clock, policy: 'skip' });
  const values = latencies(1000, 11);
  for (const v of values) r.recordOk(v, Math.floor(v * 0.8), 20000);
  r.recordError(5 * MS, 4 * MS, 30000);
  r.recordTimeout(1000 * MS, 999 * MS, 40000);
  r.recordSkipped(900 * MS);
  clock.t += 10000;
  return r.snapshot();
}

describe('latency/summary: summarize', () => {
  it('gives count 0 and null statistics for an empty histogram', () => {
    const s = summarize(createHistogram());
    assert.deepEqual(Object.keys(s), STAT_FIELDS);
    assert.equal(s.count, 0);
    for (const name of STAT_FIELDS.slice(1)) assert.equal(s[name], null, name);
  });

  it('reports milliseconds by default and any unit on request', () => {
    const h = createHistogram();
    for (let i = 1; i <= 100; i++) recordNs(h, i * MS);
    const ms = summarize(h);
    assert.equal(ms.count, 100);
    assert.equal(ms.min, h.getValueAtPercentile(0) / MS);
    assert.equal(ms.p50, h.getValueAtPercentile(50) / MS);
    assert.equal(ms.p99_99, h.getValueAtPercentile(99.99) / MS);
    assert.ok(Math.abs(ms.p90 - 90) / 90 < 0.001);
    assert.ok(Math.abs(ms.max - 100) / 100 < 0.001);
    const us = summarize(h, { unitNs: 1000 });
    assert.equal(us.p90, ms.p90 * 1000);
    throwsCode(() => summarize(h, { unitNs: 0 }), 'NINES_ERR_INVALID_ARG', /options.unitNs/);
    throwsCode(() => summarize({}), 'NINES_ERR_INVALID_ARG');
  });

  it('does not truncate percentiles the way the library summary does', () => {
    const h = createHistogram();
    recordNs(h, 123456);
    assert.equal(h.summary.p99, 123000, 'the library truncates to 3 digits');
    assert.equal(summarize(h, { unitNs: 1 }).p99, 123519);
  });

  it('is reproduced exactly by a subscriber who decodes the encoded histogram', () => {
    for (const seed of [21, 22, 23]) {
      const h = createHistogram();
      for (const v of latencies(5000, seed)) recordNs(h, v);
      const copy = decodeHistogram(encodeHistogram(h));
      assert.deepEqual(summarize(copy), summarize(h));
      // max is the top bucket's highest equivalent value, not the raw value the library keeps
      assert.notEqual(h.maxValue, copy.maxValue);
      assert.equal(summarize(h, { unitNs: 1 }).max, copy.maxValue);
      // and the library's own decoder agrees
      const lib = hdr.decodeFromCompressedBase64(encodeHistogram(h));
      assert.deepEqual(summarize(lib), summarize(h));
    }
  });

  it('never averages percentiles: the merged p99 of latency-notes §5.1 is 5 ms, not 451 ms', () => {
    // A: p99 2 ms over 10,000 samples (its top 1 % at 5 ms); B: 100 samples, 10 at 900 ms.
    const a = createHistogram();
    for (let i = 0; i < 9900; i++) recordNs(a, 2 * MS);
    for (let i = 0; i < 100; i++) recordNs(a, 5 * MS);
    const b = createHistogram();
    for (let i = 0; i < 90; i++) recordNs(b, 2 * MS);
    for (let i = 0; i < 10; i++) recordNs(b, 900 * MS);
    const pa = summarize(a).p99;
    const pb = summarize(b).p99;
    assert.ok(Math.abs(pa - 2) < 0.01 && Math.abs(pb - 900) < 1);
    const acc = createAccumulator();
    mergeInto(acc, decodeHistogram(encodeHistogram(a)));
    mergeInto(acc, decodeHistogram(encodeHistogram(b)));
    const merged = summarize(acc).p99;
    assert.ok(Math.abs(merged - 5) / 5 < 0.001, `merged p99 ${merged} ms`);
    assert.ok(Math.abs((pa + pb) / 2 - 451) < 1, 'the average of the p99s would say 451 ms');
    const weighted = (pa * 10000 + pb * 100) / 10100;
    assert.ok(Math.abs(weighted - 10.9) < 0.1, 'the count-weighted average would say 10.9 ms');
  });
});

describe('latency/summary: latencyPayload', () => {
  it('builds the design.md payload with the documented fields and types', () => {
    const snap = busySnapshot();
    const p = latencyPayload(snap, META);
    assert.deepEqual(Object.keys(p), [
      'v', 'gateway', 'job', 'target', 'op', 'seq', 'start', 'end', 'policy', 'count', 'ok', 'errors',
      'timeouts', 'skipped', 'rate', 'unit', 'min', 'mean', 'stddev', 'p50', 'p90', 'p99', 'p99_9', 'p99_99',
      'max', 'service', 'lag', 'hist'
    ]);
    assert.equal(p.v, 1);
    assert.equal(p.gateway, 'edge-1');
    assert.equal(p.op, '@01');
    assert.equal(p.seq, 0);
    assert.equal(p.start, 1700000000000);
    assert.equal(p.end, 1700000010000);
    assert.equal(p.policy, 'skip');
    assert.deepEqual([p.count, p.ok, p.errors, p.timeouts, p.skipped], [1003, 1000, 1, 1, 1]);
    assert.equal(p.rate, 1002 / 10, 'skipped slots were never sent');
    assert.equal(p.unit, 'ms');
    for (const name of STAT_FIELDS.slice(1)) assert.equal(typeof p[name], 'number', name);
    assert.deepEqual(Object.keys(p.service), STAT_FIELDS);
    assert.deepEqual(Object.keys(p.lag), STAT_FIELDS);
    assert.equal(p.service.count, 1002);
    assert.equal(p.lag.max, snap.lag.getValueAtPercentile(100) / MS);
    assert.match(p.hist, /^HISTF/);
    assert.deepEqual(summarize(decodeHistogram(p.hist)), { count: 1003, ...Object.fromEntries(STAT_FIELDS.slice(1).map((k) => [k, p[k]])) });
    assert.deepEqual(JSON.parse(JSON.stringify(p)), p, 'plain JSON');
  });

  it('adds clamped and invalid counts only when they are not zero', () => {
    const clock = manualClock();
    const r = new Recorder({ clock });
    r.recordOk(1e13, 1000, NaN);
    clock.t += 1000;
    const p = latencyPayload(r.snapshot(), META);
    assert.equal(p.clamped, 1);
    assert.equal(p.invalid, 1);
    assert.equal(p.rate, 1);
  });

  it('gives rate null for a zero-length interval and nulls for an empty one', () => {
    const r = new Recorder({ clock: manualClock() });
    const p = latencyPayload(r.snapshot(), { ...META, op: { fc: 3, address: 0, quantity: 10 } });
    assert.equal(p.rate, null);
    assert.equal(p.count, 0);
    assert.equal(p.p99, null);
    assert.equal(p.service.max, null);
    assert.deepEqual(p.op, { fc: 3, address: 0, quantity: 10 });
  });

  it('names the field that is missing or wrong', () => {
    const snap = busySnapshot();
    throwsCode(() => latencyPayload(snap, { ...META, gateway: '' }), 'NINES_ERR_INVALID_ARG', /meta.gateway must be a non-empty string/);
    throwsCode(() => latencyPayload(snap, { ...META, op: 7 }), 'NINES_ERR_INVALID_ARG', /meta.op/);
    throwsCode(() => latencyPayload(snap, null), 'NINES_ERR_INVALID_ARG', /meta must be an object/);
    throwsCode(() => latencyPayload({ ...snap, count: 5 }, META), 'NINES_ERR_INVALID_ARG', /snapshot.count/);
  });
});

describe('latency/summary: parseLatencyPayload', () => {
  it('accepts the payload as object, JSON text or bytes and decodes its histogram', () => {
    const p = latencyPayload(busySnapshot(), META);
    for (const input of [p, JSON.stringify(p), Buffer.from(JSON.stringify(p))]) {
      const got = parseLatencyPayload(input);
      assert.equal(got.histogram.totalCount, 1003);
      assert.equal(got.clamped, 0);
      assert.equal(got.p99, p.p99);
      assert.deepEqual(got.service, p.service);
      assert.equal(summarize(got.histogram).p99_9, p.p99_9);
    }
  });

  it('merges payloads from several gateways by adding their histograms', () => {
    const acc = createAccumulator();
    const payloads = [busySnapshot(), busySnapshot()].map((s, i) => latencyPayload(s, { ...META, gateway: `gw${i}` }));
    for (const p of payloads) mergeInto(acc, parseLatencyPayload(JSON.stringify(p)).histogram);
    assert.equal(acc.totalCount, 2006);
    assert.equal(summarize(acc).p99, payloads[0].p99, 'two identical gateways merge to the same percentiles');
  });

  it('rejects bad fields with NINES_ERR_INVALID_ARG naming them', () => {
    const p = latencyPayload(busySnapshot(), META);
    const cases = [
      [{ ...p, v: 2 }, /payload.v must be 1/],
      [{ ...p, unit: 'us' }, /payload.unit/],
      [{ ...p, job: undefined }, /payload.job/],
      [{ ...p, seq: -1 }, /payload.seq must be an integer >= 0; got -1/],
      [{ ...p, end: p.start - 1 }, /payload.end/],
      [{ ...p, policy: 'random' }, /payload.policy/],
      [{ ...p, count: p.count + 1 }, /payload.count/],
      [{ ...p, rate: -5 }, /payload.rate/],
      [{ ...p, p99: 'fast' }, /payload.p99/],
      [{ ...p, lag: { ...p.lag, count: 1.5 } }, /payload.lag.count/],
      [{ ...p, service: { ...p.service, count: p.count + 1 } }, /payload.service.count must be at most count/],
      [{ ...p, service: null }, /payload.service must be an object/],
      [{ ...p, count: 2, ok: 2, errors: 0, timeouts: 0, skipped: 0, service: { ...p.service, count: 2 }, lag: { ...p.lag, count: 2 } },
        /payload.hist must be a histogram of at most count/],
      ['{"v":1,', /payload must be JSON/],
      [[], /payload must be an object/]
    ];
    for (const [input, message] of cases) throwsCode(() => parseLatencyPayload(input), 'NINES_ERR_INVALID_ARG', message);
  });

  it('rejects a bad histogram with NINES_ERR_BAD_HISTOGRAM', () => {
    const p = latencyPayload(busySnapshot(), META);
    throwsCode(() => parseLatencyPayload({ ...p, hist: 'HISTF!!!' }), 'NINES_ERR_BAD_HISTOGRAM');
    throwsCode(() => parseLatencyPayload({ ...p, hist: undefined }), 'NINES_ERR_BAD_HISTOGRAM');
    throwsCode(() => parseLatencyPayload(p, { maxChars: 8 }), 'NINES_ERR_BAD_HISTOGRAM', /outside \[1, 8\]/);
  });
});
