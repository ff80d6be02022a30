'use strict';

const assert = require('node:assert/strict');
const { FleetView } = require('../../gateway/measure/watch');
const { Recorder, latencyPayload, summarize, createHistogram, recordNs } = require('../../gateway/latency');
const { renderTable } = require('../../gateway/cli/table');

/** a latency payload from a gateway whose responses all take `ms` (n of them, plus `slow` at slowMs) */
function payload (gateway, job, seq, { n, ms, slow = 0, slowMs = 0, lagMs = 0.001 }) {
  const rec = new Recorder({ policy: 'capped' });
  for (let i = 0; i < n; i++) rec.recordOk(ms * 1e6, ms * 1e6, lagMs * 1e6);
  for (let i = 0; i < slow; i++) rec.recordOk(slowMs * 1e6, slowMs * 1e6, lagMs * 1e6);
  const snap = rec.snapshot();
  return latencyPayload({ ...snap, seq }, { gateway, job, target: 'ascii://x:9500', op: '@AA' });
}

describe('fleet view (nines watch)', () => {
  it('merges a job across gateways by adding histograms, never by averaging percentiles', () => {
    const view = new FleetView();
    // gateway A: 10,000 fast requests; gateway B: 100 requests of which 10 very slow (latency notes §5.1)
    const a = payload('gw-a', 'plc', 0, { n: 9900, ms: 2, slow: 100, slowMs: 5 });
    const b = payload('gw-b', 'plc', 0, { n: 90, ms: 2, slow: 10, slowMs: 900 });
    assert.ok(view.add(JSON.stringify(a)).ok);
    assert.ok(view.add(Buffer.from(JSON.stringify(b))).ok);
    const [row] = view.rows();
    assert.equal(row.job, 'plc');
    assert.equal(row.gateway, '2 gateways');
    assert.equal(row.count, 10100);
    // the truth: one histogram holding every sample
    const all = createHistogram();
    for (let i = 0; i < 9990; i++) recordNs(all, 2e6);
    for (let i = 0; i < 100; i++) recordNs(all, 5e6);
    for (let i = 0; i < 10; i++) recordNs(all, 900e6);
    const truth = summarize(all);
    assert.equal(row.p99, truth.p99);
    assert.equal(row.max, truth.max);
    const averaged = (a.p99 + b.p99) / 2;
    assert.ok(Math.abs(row.p99 - averaged) > 100, `merged p99 ${row.p99} ms, averaged would say ${averaged} ms`);
  });

  it('counts seq gaps per gateway and job, and rejects bad payloads without failing', () => {
    const view = new FleetView();
    view.add(payload('gw-a', 'j', 0, { n: 10, ms: 1 }));
    view.add(payload('gw-a', 'j', 1, { n: 10, ms: 1 }));
    view.add(payload('gw-a', 'j', 4, { n: 10, ms: 1 }));
    view.add(payload('gw-b', 'j', 7, { n: 10, ms: 1 }));
    assert.equal(view.gaps, 2);
    const bad = view.add('{"v":1,"hist":"HISTFAAAAbogus"}');
    assert.equal(bad.ok, false);
    assert.equal(view.add('not json').ok, false);
    assert.equal(view.rejected, 2);
    assert.equal(view.rows()[0].count, 20, 'the latest interval of each gateway');
  });

  it('drops a gateway that went quiet from the merge', () => {
    const view = new FleetView({ staleMs: 1000 });
    view.add(payload('gw-a', 'j', 0, { n: 10, ms: 1 }), 0);
    view.add(payload('gw-b', 'j', 0, { n: 30, ms: 1 }), 5000);
    const [row] = view.rows(5500);
    assert.equal(row.gateway, 'gw-b');
    assert.equal(row.count, 30);
  });

  it('fills "lag p99" from the summaries: the highest of the gateways\' dispatch-lag p99', () => {
    const view = new FleetView();
    view.add(payload('gw-a', 'plc', 0, { n: 100, ms: 2, lagMs: 0.2 }));
    view.add(payload('gw-b', 'plc', 0, { n: 100, ms: 2, lagMs: 3 }));
    const [row] = view.rows();
    assert.ok(Math.abs(row.lag.p99 - 3) < 0.01, `lag p99 ${row.lag.p99}`);
    const [head, line] = renderTable([row], { withGateway: true }).split('\n');
    const col = head.split(/ {2,}/).indexOf('lag p99');
    assert.ok(col > 0);
    assert.equal(line.trim().split(/ {2,}/)[col], '3.000', line);
  });

  it('rejects a payload over the size cap before decoding it', () => {
    const view = new FleetView();
    const huge = Buffer.alloc(20 * 1024 * 1024, 0x20);
    const t0 = process.hrtime.bigint();
    const r = view.add(huge);
    assert.equal(r.ok, false);
    assert.equal(r.error.code, 'NINES_ERR_INVALID_ARG');
    assert.match(r.error.message, /20971520 bytes is over the \d+-byte cap/);
    assert.ok(Number(process.hrtime.bigint() - t0) < 50e6, 'not parsed');
    assert.equal(view.rejected, 1);
    assert.equal(new FleetView({ maxPayloadBytes: 100 }).add(JSON.stringify(payload('g', 'j', 0, { n: 1, ms: 1 }))).ok, false);
  });

  it('counts a forged or restarted seq as a resync, not as billions of lost summaries', () => {
    const view = new FleetView();
    view.add(payload('gw-a', 'j', 5, { n: 1, ms: 1 }));
    view.add(payload('gw-a', 'j', 9e15, { n: 1, ms: 1 }));
    view.add(payload('gw-a', 'j', 0, { n: 1, ms: 1 })); // the gateway restarted
    view.add(payload('gw-a', 'j', 3, { n: 1, ms: 1 }));
    assert.equal(view.gaps, 2, 'only 0 → 3 lost two');
    assert.equal(view.resyncs, 2);
  });

  it('forgets quiet series and keeps at most maxSeries, evicting the least recently updated', () => {
    const view = new FleetView({ staleMs: 1000, forgetMs: 5000, maxSeries: 3 });
    for (let i = 0; i < 5; i++) view.add(payload('gw', `job-${i}`, 0, { n: 1, ms: 1 }), i);
    assert.equal(view.series.size, 3);
    assert.equal(view.evicted, 2);
    assert.deepEqual(view.rows(4).map((r) => r.job), ['job-2', 'job-3', 'job-4']);
    view.forget(2 + 5001);
    assert.equal(view.series.size, 2, 'job-2 quiet for 5 s is forgotten');
    assert.equal(view.updates.has('job-2'), false);
    // thousands of distinct job names stay within the bound
    const big = new FleetView({ maxSeries: 100 });
    const p = payload('gw', 'x', 0, { n: 1, ms: 1 });
    for (let i = 0; i < 5000; i++) big.add({ ...p, job: `j${i}` }, i);
    assert.equal(big.series.size, 100);
    assert.ok(big.updates.size <= 100);
  });
});
