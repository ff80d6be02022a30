'use strict';

const assert = require('node:assert/strict');
const { helper, expectError, lastStatus } = require('./harness');
const latency = require('../../gateway/latency');
const mergeNode = require('../../nodes/nines-latency-merge');
const { until } = require('../helpers/wait');

/**
 * A latency payload as a gateway publishes it (design.md), with a histogram of the given values.
 * @param {object} o {gateway, job, seq, end (epoch ms), valuesMs}
 */
function payload ({ gateway = 'gw1', job = 'plc1-hr', seq = 0, end = 1_700_000_010_000, valuesMs }) {
  const h = latency.createHistogram();
  for (const v of valuesMs) latency.recordNs(h, Math.round(v * 1e6));
  const s = latency.summarize(h);
  const n = valuesMs.length;
  const { count, ...stats } = s;
  return {
    v: 1, gateway, job, target: 'modbus+tcp://127.0.0.1:5020?unitId=1', op: '3:0:10', seq,
    start: end - 10000, end, policy: 'capped',
    count: n, ok: n, errors: 0, timeouts: 0, skipped: 0, rate: n / 10, unit: 'ms',
    ...stats,
    service: { count, ...stats },
    lag: { count, ...stats },
    hist: latency.encodeHistogram(h)
  };
}

const repeat = (n, v) => new Array(n).fill(v);

function flow (extra = {}) {
  return [
    { id: 'm', type: 'nines-latency-merge', keyBy: 'job', window: 60, output: 'input', interval: 10, percentiles: 'p50,p99,max', wires: [['sum'], ['chart']], ...extra },
    { id: 'sum', type: 'helper' },
    { id: 'chart', type: 'helper' }
  ];
}

/** Sends msgs in order and collects what both outputs produce. */
function collect () {
  const out = { sum: [], chart: [] };
  helper.getNode('sum').on('input', (m) => out.sum.push(m));
  helper.getNode('chart').on('input', (m) => out.chart.push(m));
  return out;
}

const near = (a, b, rel = 0.01) => Math.abs(a - b) <= rel * b;

describe('nines-latency-merge', function () {
  before(() => helper.startServer());
  after(() => helper.stopServer());
  afterEach(() => helper.unload());

  it('merges the histograms of two gateways, never averaging percentiles', async () => {
    await helper.load(mergeNode, flow());
    const out = collect();
    const m = helper.getNode('m');
    // gw1 alone has p99 = 100 ms, gw2 alone 2 ms; their mean would be 51 ms. The merged p99 is 2 ms.
    m.receive({ payload: payload({ gateway: 'gw1', valuesMs: [...repeat(98, 1), 100, 100] }) });
    m.receive({ payload: payload({ gateway: 'gw2', valuesMs: repeat(100, 2) }) });
    await until(() => out.sum.length === 2, 'two summaries');
    const s = out.sum[1].payload;
    assert.equal(out.sum[1].topic, 'plc1-hr');
    assert.equal(s.key, 'plc1-hr');
    assert.deepEqual(s.gateways, ['gw1', 'gw2']);
    assert.equal(s.count, 200);
    assert.equal(s.ok, 200);
    assert.equal(s.unit, 'ms');
    assert.ok(near(s.p99, 2), `merged p99 ${s.p99}`);
    assert.ok(near(s.max, 100), `max ${s.max}`);
    assert.ok(near(s.p50, 2), `p50 ${s.p50}`);
    assert.equal(s.window.intervals, 2);
    assert.equal(s.window.seconds, 60);
  });

  it('sends one chart msg per percentile on output 2', async () => {
    await helper.load(mergeNode, flow());
    const out = collect();
    helper.getNode('m').receive({ payload: payload({ valuesMs: repeat(10, 4), end: 1_700_000_100_000 }) });
    await until(() => out.chart.length === 3, 'three chart msgs');
    assert.deepEqual(out.chart.map((c) => c.topic), ['plc1-hr p50', 'plc1-hr p99', 'plc1-hr max']);
    for (const c of out.chart) {
      assert.ok(near(c.payload, 4), `${c.topic} ${c.payload}`);
      assert.equal(c.timestamp, 1_700_000_100_000);
    }
  });

  it('takes payloads as JSON text or bytes, as mqtt-in delivers them', async () => {
    await helper.load(mergeNode, flow());
    const out = collect();
    const m = helper.getNode('m');
    m.receive({ payload: JSON.stringify(payload({ seq: 1, valuesMs: [1] })) });
    m.receive({ payload: Buffer.from(JSON.stringify(payload({ seq: 2, valuesMs: [1] }))) });
    await until(() => out.sum.length === 2, 'two summaries');
    assert.equal(out.sum[1].payload.count, 2);
  });

  it('slides the window by the intervals\' end times', async () => {
    await helper.load(mergeNode, flow({ window: 30 }));
    const out = collect();
    const m = helper.getNode('m');
    const t0 = 1_700_000_000_000;
    m.receive({ payload: payload({ seq: 0, end: t0, valuesMs: [50] }) });
    m.receive({ payload: payload({ seq: 1, end: t0 + 20000, valuesMs: [1] }) });
    m.receive({ payload: payload({ seq: 2, end: t0 + 40000, valuesMs: [1] }) });
    await until(() => out.sum.length === 3, 'three summaries');
    assert.equal(out.sum[1].payload.count, 2);
    assert.ok(near(out.sum[1].payload.max, 50));
    // the first interval ended 40 s before the newest: out of the 30 s window
    assert.equal(out.sum[2].payload.count, 2);
    assert.equal(out.sum[2].payload.window.intervals, 2);
    assert.ok(near(out.sum[2].payload.max, 1), `max ${out.sum[2].payload.max}`);
  });

  it('merges a redelivered interval once and counts a gap in seq', async () => {
    await helper.load(mergeNode, flow());
    const out = collect();
    const m = helper.getNode('m');
    const p0 = payload({ seq: 0, valuesMs: [1, 1] });
    m.receive({ payload: p0 });
    m.receive({ payload: p0 });
    m.receive({ payload: payload({ seq: 3, valuesMs: [1] }) });
    await until(() => out.sum.length === 2, 'two summaries (the duplicate sends none)');
    const s = out.sum[1].payload;
    assert.equal(s.count, 3);
    assert.equal(s.duplicates, 1);
    assert.equal(s.missed, 2);
  });

  it('keys by gateway when asked', async () => {
    await helper.load(mergeNode, flow({ keyBy: 'gateway' }));
    const out = collect();
    const m = helper.getNode('m');
    m.receive({ payload: payload({ gateway: 'edge-1', job: 'a', valuesMs: [1] }) });
    m.receive({ payload: payload({ gateway: 'edge-1', job: 'b', valuesMs: [3] }) });
    m.receive({ payload: payload({ gateway: 'edge-2', job: 'a', valuesMs: [5] }) });
    await until(() => out.sum.length === 3, 'three summaries');
    assert.deepEqual(out.sum.map((s) => s.topic), ['edge-1', 'edge-1', 'edge-2']);
    assert.equal(out.sum[1].payload.count, 2);
    assert.deepEqual(out.sum[1].payload.jobs, ['a', 'b']);
    assert.equal(out.sum[2].payload.count, 1);
  });

  describe('bad payloads get a coded error, are counted, and the node goes on', () => {
    const good = payload({ valuesMs: [1] });
    const cases = [
      ['text that is not JSON', 'not json', 'NINES_ERR_INVALID_ARG', /JSON/],
      ['a number', 42, 'NINES_ERR_INVALID_ARG', /payload must be an object/],
      ['a missing gateway', { ...good, gateway: undefined }, 'NINES_ERR_INVALID_ARG', /payload.gateway/],
      ['counts that do not add up', { ...good, count: 5 }, 'NINES_ERR_INVALID_ARG', /payload.count/],
      ['a corrupt histogram', { ...good, hist: 'HISTFAAAAB' + 'x'.repeat(20) }, 'NINES_ERR_BAD_HISTOGRAM', /histogram/]
    ];
    for (const [what, bad, code, re] of cases) {
      it(`rejects ${what} (${code})`, async () => {
        await helper.load(mergeNode, flow());
        const out = collect();
        const m = helper.getNode('m');
        const err = await expectError(m, { payload: bad });
        assert.equal(err.code, code);
        assert.match(err.message, re);
        await until(() => lastStatus(m) && lastStatus(m).fill === 'yellow', 'the bad count in the status');
        m.receive({ payload: good });
        await until(() => out.sum.length === 1, 'a summary after the bad payload');
        assert.equal(out.sum[0].payload.count, 1);
      });
    }
  });

  it('forgets everything on msg.topic reset', async () => {
    await helper.load(mergeNode, flow());
    const out = collect();
    const m = helper.getNode('m');
    m.receive({ payload: payload({ seq: 0, valuesMs: [1] }) });
    m.receive({ topic: 'reset' });
    m.receive({ payload: payload({ seq: 1, valuesMs: [1] }) });
    await until(() => out.sum.length === 2, 'two summaries');
    assert.equal(out.sum[1].payload.count, 1);
    assert.equal(out.sum[1].payload.missed, 0);
  });

  it('emits every N seconds, one summary per key, in interval mode', async () => {
    await helper.load(mergeNode, flow({ output: 'interval', interval: 0.1 }));
    const out = collect();
    const m = helper.getNode('m');
    m.receive({ payload: payload({ job: 'a', valuesMs: [1] }) });
    m.receive({ payload: payload({ job: 'b', valuesMs: [2] }) });
    await until(() => out.sum.length >= 4, 'two ticks of two keys');
    assert.deepEqual(out.sum.slice(0, 2).map((s) => s.topic), ['a', 'b']);
    assert.equal(out.chart.length, out.sum.length * 3);
  });

  it('rejects an unknown key setting from the flow JSON', async () => {
    await helper.load(mergeNode, flow({ keyBy: 'site' }));
    const err = await expectError(helper.getNode('m'), { payload: payload({ valuesMs: [1] }) });
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.match(err.message, /keyBy must be one of/);
  });
});
