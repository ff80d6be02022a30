'use strict';

const assert = require('node:assert/strict');
const { FleetView } = require('../../gateway/measure/watch');
const { Recorder, latencyPayload, summarize, createHistogram, recordNs } = require('../../gateway/latency');

/** a latency payload from a gateway whose responses all take `ms` (n of them, plus `slow` at slowMs) */
function payload (gateway, job, seq, { n, ms, slow = 0, slowMs = 0 }) {
  const rec = new Recorder({ policy: 'capped' });
  for (let i = 0; i < n; i++) rec.recordOk(ms * 1e6, ms * 1e6, 1000);
  for (let i = 0; i < slow; i++) rec.recordOk(slowMs * 1e6, slowMs * 1e6, 1000);
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
});
