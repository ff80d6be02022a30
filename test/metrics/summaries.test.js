'use strict';

/**
 * The metrics' summaries of the last interval and the classic buckets, as the collector builds
 * them and the text expositions write them.
 */

const assert = require('node:assert/strict');
const { MetricsCollector } = require('../../gateway/runtime/metrics/collector');
const { encodeText, labelFloat } = require('../../gateway/runtime/metrics/text');
const { QUANTILES } = require('../../gateway/runtime/metrics/interval-quantiles');
const D = require('../../gateway/runtime/http/defaults');
const { createHistogram, recordNs, encodeHistogram, decodeHistogram, summarize } = require('../../gateway/latency');

/** @param {number[]} valuesNs @returns {object} decoded, as the gateway hands histograms to the collector */
function decoded (valuesNs) {
  const h = createHistogram();
  for (const v of valuesNs) recordNs(h, v);
  return decodeHistogram(encodeHistogram(h));
}

const range = (n, f) => Array.from({ length: n }, (_, i) => f(i));

function collector () {
  return new MetricsCollector({ gateway: 'gw', version: 't', jobs: { a: 'plc', idle: 'plc' }, publisherStats: () => null, bucketsNs: D.METRICS_BUCKETS_NS });
}

async function family (c, name) {
  return (await c.families()).find((f) => f.name === name);
}

describe('metrics: summaries of the last interval', () => {
  it('gives each job the quantiles and max of nines\' own summary of the interval, in seconds', async () => {
    const c = collector();
    const response = decoded(range(1000, (i) => 1e6 + i * 7919));
    const service = decoded(range(1000, (i) => 5e5 + i * 3001));
    const lag = decoded(range(1000, (i) => 1e4 + i * 17));
    c.onSummary('a', { ok: 1000, errors: 0, timeouts: 0, skipped: 0 }, { response, service, lag });
    for (const [field, h] of [['response_time', response], ['service_time', service], ['dispatch_lag', lag]]) {
      const own = summarize(h); // what the MQTT latency payload carries, in ms
      const s = (await family(c, `nines_job_interval_${field}_seconds`)).samples.find((x) => x.labels.job_name === 'a');
      assert.deepEqual(s.quantiles.map((q) => q.quantile), [0.5, 0.9, 0.99, 0.999]);
      assert.deepEqual(s.quantiles.map((q) => q.value * 1e3), [own.p50, own.p90, own.p99, own.p99_9].map((v) => v * 1e6 / 1e9 * 1e3), field);
      const max = (await family(c, `nines_job_interval_${field}_max_seconds`)).samples.find((x) => x.labels.job_name === 'a');
      assert.equal(max.value, own.max / 1e3, field);
    }
  });

  it('replaces the quantiles with each interval, and keeps _sum and _count cumulative, equal to the histogram\'s', async () => {
    const c = collector();
    const slow = decoded(range(100, () => 50e6));
    const fast = decoded(range(300, () => 2e6));
    c.onSummary('a', { ok: 100, errors: 0, timeouts: 0, skipped: 0 }, { response: slow });
    c.onSummary('a', { ok: 300, errors: 0, timeouts: 0, skipped: 0 }, { response: fast });
    const s = (await family(c, 'nines_job_interval_response_time_seconds')).samples.find((x) => x.labels.job_name === 'a');
    const h = (await family(c, 'nines_job_response_time_seconds')).samples.find((x) => x.labels.job_name === 'a');
    assert.ok(s.quantiles.every((q) => Math.abs(q.value - 0.002) / 0.002 < 1e-3), 'the last interval only (2 ms), not the 50 ms before it');
    assert.equal(s.count, 400);
    assert.equal(s.count, h.count);
    assert.equal(s.sum, h.sum);
    assert.ok(Math.abs(s.sum - (100 * 0.05 + 300 * 0.002)) / s.sum < 1e-3);
  });

  it('writes NaN for a job without an interval yet, and for one whose histograms were not sent', async () => {
    const c = collector();
    c.onSummary('a', { ok: 1, errors: 0, timeouts: 0, skipped: 0 }, { response: decoded([1e6]) });
    const s = (await family(c, 'nines_job_interval_response_time_seconds')).samples;
    assert.ok(s.find((x) => x.labels.job_name === 'idle').quantiles.every((q) => Number.isNaN(q.value)));
    assert.equal(s.find((x) => x.labels.job_name === 'idle').count, 0);
    assert.ok(Number.isNaN((await family(c, 'nines_job_interval_service_time_max_seconds')).samples.find((x) => x.labels.job_name === 'a').value));
  });

  it('names no summary family like a histogram family, nor with a series name of one', async () => {
    const families = await collector().families();
    const series = new Map();
    for (const f of families) {
      const names = f.type === 'histogram' ? ['_bucket', '_sum', '_count', ''].map((x) => f.name + x)
        : f.type === 'summary' ? ['_sum', '_count', ''].map((x) => f.name + x)
          : [f.type === 'counter' ? `${f.name}_total` : f.name];
      for (const n of names) {
        assert.ok(!series.has(n), `${n} of ${f.name} and of ${series.get(n)}`);
        series.set(n, f.name);
      }
    }
    // the check covers both kinds: the collector has summary and histogram families to compare
    assert.ok(families.some((f) => f.type === 'summary') && families.some((f) => f.type === 'histogram'), families.map((f) => `${f.name}:${f.type}`).join(' '));
    assert.equal(QUANTILES.length, 4);
  });
});

describe('metrics: the text expositions', () => {
  it('writes le and quantile values as Prometheus names them from protobuf (Go\'s shortest float, ".0" on whole numbers)', () => {
    const cases = [[1, '1.0'], [10, '10.0'], [0, '0.0'], [0.5, '0.5'], [0.999, '0.999'], [1e-5, '1e-05'], [1.6e-5, '1.6e-05'], [6.3e-5, '6.3e-05'],
      [1e-4, '0.0001'], [0.00016, '0.00016'], [6.3, '6.3'], [3600, '3600.0'], [123456, '123456.0'], [1e6, '1e+06'], [1234567, '1.234567e+06'], [Infinity, '+Inf']];
    for (const [v, text] of cases) assert.equal(labelFloat(v), text, String(v));
  });

  it('writes each histogram\'s classic buckets, +Inf equal to _count, and each summary\'s quantiles, _sum and _count', async () => {
    const c = collector();
    c.onSummary('a', { ok: 1000, errors: 0, timeouts: 0, skipped: 0 }, { response: decoded(range(1000, (i) => 1e6 + i * 1000)) });
    for (const openMetrics of [false, true]) {
      const text = encodeText(await c.families(), { openMetrics });
      const labels = 'gateway="gw",job_name="a",device="plc"';
      const bucket = (le) => Number(new RegExp(`^nines_job_response_time_seconds_bucket\\{${labels},le="${le.replace(/[.+]/g, '\\$&')}"\\} (\\S+)$`, 'm').exec(text)[1]);
      // 1 ms itself is in the HDR bucket 0.999936 … 1.000447 ms, which nines reports as its top
      // (its p0.1 says 1.000447 ms), so it counts above 1 ms, as nines' own figures place it
      assert.equal(bucket('0.001'), 0);
      assert.equal(bucket('0.0016'), 600, '1.000 … 1.599 ms');
      assert.equal(bucket('1e-05'), 0);
      assert.equal(bucket('+Inf'), 1000);
      assert.match(text, new RegExp(`^nines_job_response_time_seconds_count\\{${labels}\\} 1000$`, 'm'));
      const les = [...text.matchAll(new RegExp(`^nines_job_response_time_seconds_bucket\\{${labels},le="([^"]+)"\\} (\\d+)$`, 'gm'))];
      assert.equal(les.length, D.METRICS_BUCKETS_NS.length + 1);
      for (let i = 1; i < les.length; i++) assert.ok(Number(les[i][2]) >= Number(les[i - 1][2]), 'cumulative');
      assert.match(text, /^# TYPE nines_job_interval_response_time_seconds summary$/m);
      for (const q of ['0.5', '0.9', '0.99', '0.999']) assert.match(text, new RegExp(`^nines_job_interval_response_time_seconds\\{${labels},quantile="${q}"\\} 0\\.00\\d+$`, 'm'));
      assert.match(text, new RegExp(`^nines_job_interval_response_time_seconds_count\\{${labels}\\} 1000$`, 'm'));
      assert.match(text, new RegExp(`^nines_job_interval_response_time_max_seconds\\{${labels}\\} 0\\.001999\\d*$`, 'm'));
      assert.match(text, /^nines_job_interval_response_time_seconds\{gateway="gw",job_name="idle",device="plc",quantile="0.99"\} NaN$/m);
      if (openMetrics) assert.match(text, /^# UNIT nines_job_interval_response_time_max_seconds seconds$/m);
    }
  });

  it('writes only +Inf, _sum and _count for a histogram without classic buckets', async () => {
    const c = new MetricsCollector({ gateway: 'gw', version: 't', jobs: { a: 'plc' }, publisherStats: () => null, bucketsNs: [] });
    c.onSummary('a', { ok: 2, errors: 0, timeouts: 0, skipped: 0 }, { response: decoded([1e6, 2e6]) });
    const text = encodeText(await c.families());
    assert.deepEqual(text.match(/^nines_job_response_time_seconds_bucket.*$/gm), ['nines_job_response_time_seconds_bucket{gateway="gw",job_name="a",device="plc",le="+Inf"} 2']);
  });
});
