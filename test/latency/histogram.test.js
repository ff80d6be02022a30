'use strict';

const assert = require('node:assert/strict');
const hdr = require('hdr-histogram-js');
const C = require('../../gateway/base/constants');
const {
  createHistogram, createAccumulator, recordNs, mergeInto, encodeHistogram, decodeHistogram,
  RECORD_OK, RECORD_CLAMPED, RECORD_INVALID
} = require('../../gateway/latency/histogram');
const { PagedHistogram } = require('../../gateway/latency/paged-histogram');
const { latencies, throwsCode } = require('./support/helpers');

const PERCENTILES = [0, 0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99, 99.999, 100];

/** The library's dense 32-bit histogram with the same fixed range, as the reference. */
function denseReference () {
  return hdr.build({ autoResize: false, lowestDiscernibleValue: 1, highestTrackableValue: C.HIST_HIGHEST_NS, numberOfSignificantValueDigits: 3 });
}

describe('latency/histogram: recordNs', () => {
  it('records integer numbers and bigints and reports 0', () => {
    const h = createHistogram();
    assert.equal(recordNs(h, 0), RECORD_OK);
    assert.equal(recordNs(h, 1234567), RECORD_OK);
    assert.equal(recordNs(h, 1234567n), RECORD_OK);
    assert.equal(recordNs(h, C.HIST_HIGHEST_NS), RECORD_OK);
    assert.equal(h.totalCount, 4);
    assert.equal(h.getCountAtValue(1234567), 2);
  });

  it('refuses NaN, infinities, fractions, negatives and non-numbers without touching the histogram', () => {
    const h = createHistogram();
    for (const bad of [NaN, Infinity, -Infinity, 0.5, 1.7, 1e6 + 0.25, -1, -1n, '5', null, undefined, {}, 3.6e12 + 0.5]) {
      assert.equal(recordNs(h, bad), RECORD_INVALID, `value ${String(bad)}`);
    }
    assert.equal(h.totalCount, 0);
    assert.equal(h.maxValue, 0);
  });

  it('clamps values above 1 h to 1 h, as number or bigint, and reports 1', () => {
    const h = createHistogram();
    assert.equal(recordNs(h, C.HIST_HIGHEST_NS + 1), RECORD_CLAMPED);
    assert.equal(recordNs(h, 1e300), RECORD_CLAMPED);
    assert.equal(recordNs(h, 10n ** 30n), RECORD_CLAMPED);
    assert.equal(h.totalCount, 3);
    assert.equal(h.getCountAtValue(C.HIST_HIGHEST_NS), 3);
    assert.equal(h.maxValue, C.HIST_HIGHEST_NS);
  });

  it('guards the library pitfall where NaN counts in totalCount but in no bucket', () => {
    const raw = hdr.build();
    raw.recordValue(NaN);
    assert.equal(raw.totalCount, 1);
    assert.equal(raw.getValueAtPercentile(100), 0, 'the library keeps a count it cannot place');
    const h = createHistogram();
    recordNs(h, NaN);
    assert.equal(h.totalCount, 0);
  });
});

describe('latency/histogram: paged storage', () => {
  it('gives the same percentiles, mean, stddev, max, min, encoding and .hgrm as the library dense histogram', () => {
    const values = latencies(20000, 1);
    const paged = createHistogram();
    const dense = denseReference();
    for (const v of values) {
      recordNs(paged, v);
      dense.recordValue(v);
    }
    for (const p of PERCENTILES) assert.equal(paged.getValueAtPercentile(p), dense.getValueAtPercentile(p), `p${p}`);
    assert.equal(paged.mean, dense.mean);
    assert.equal(paged.stdDeviation, dense.stdDeviation);
    assert.equal(paged.maxValue, dense.maxValue);
    assert.equal(paged.minNonZeroValue, dense.minNonZeroValue);
    assert.equal(encodeHistogram(paged), hdr.encodeIntoCompressedBase64(dense));
    assert.equal(paged.outputPercentileDistribution(5, 1e6), dense.outputPercentileDistribution(5, 1e6));
  });

  it('puts every value in the library\'s bucket, with its min and max, on the integer path and off it', () => {
    const dense = denseReference();
    const paged = createHistogram();
    // bucket and sub-bucket edges, the 2^31 boundary of the integer path, values above it and fractions
    const values = [0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 65535, 65536, 2 ** 20 - 1, 2 ** 20,
      2 ** 30 - 1, 2 ** 30, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, 5e9, 3599e9, 1.5, 12345.7];
    let seed = 7;
    const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
    for (let i = 0; i < 50000; i++) values.push(Math.floor(2 ** (33 * rand())));
    for (const v of values) {
      dense.recordValue(v);
      paged.recordValue(v);
    }
    for (let i = 0; i < dense.countsArrayLength; i++) if (dense.getCountAtIndex(i) !== paged.getCountAtIndex(i)) assert.fail(`bucket ${i}: ${paged.getCountAtIndex(i)}, the library ${dense.getCountAtIndex(i)}`);
    assert.equal(paged.totalCount, dense.totalCount);
    assert.equal(paged.maxValue, dense.maxValue);
    assert.equal(paged.minNonZeroValue, dense.minNonZeroValue);
  });

  it('summarizes in three scans to exactly what the library\'s getters give (summarize of a paged and a dense histogram)', () => {
    const { summarize } = require('../../gateway/latency/summary');
    for (const n of [1, 7, 1000, 30000]) {
      const dense = denseReference();
      const paged = createHistogram();
      for (const v of latencies(n)) {
        dense.recordValue(v);
        paged.recordValue(v);
      }
      assert.deepEqual(summarize(paged), summarize(dense));
      const ps = [0, 0.1, 50, 99, 99.9, 99.99, 100];
      assert.deepEqual(paged.valuesAtPercentiles(ps), ps.map((p) => dense.getValueAtPercentile(p)));
      const { mean, stddev } = paged.meanAndStdDeviation();
      assert.equal(mean, dense.mean);
      assert.equal(stddev, dense.stdDeviation);
    }
  });

  it('answers like the library for an empty histogram and for odd percentile arguments', () => {
    const paged = createHistogram();
    const dense = denseReference();
    for (const p of [0, 50, 100, NaN, -1, 250]) assert.equal(paged.getValueAtPercentile(p), dense.getValueAtPercentile(p));
    assert.equal(paged.mean, 0);
    assert.equal(paged.stdDeviation, 0);
    recordNs(paged, 777);
    dense.recordValue(777);
    for (const p of [0, 50, 100, NaN, -1, 250]) assert.equal(paged.getValueAtPercentile(p), dense.getValueAtPercentile(p));
  });

  it('uses far less memory than a dense 1 h histogram for device latencies', () => {
    const h = createHistogram();
    for (const v of latencies(10000, 2)) recordNs(h, v);
    assert.ok(h.estimatedFootprintInBytes < denseReference().estimatedFootprintInBytes / 4,
      `paged ${h.estimatedFootprintInBytes} B`);
  });

  it('corrects for coordinated omission like the library (README example of latency-notes §1.3)', () => {
    // 10,000 × 1 ms at a 10 ms interval, then one 100 s stall: corrected p90 80 s, p99 98 s.
    const h = createHistogram();
    for (let i = 0; i < 10000; i++) recordNs(h, 1e6);
    recordNs(h, 100e9);
    const corrected = h.copyCorrectedForCoordinatedOmission(10e6);
    assert.ok(corrected instanceof PagedHistogram);
    const dense = denseReference();
    dense.recordValueWithCount(1e6, 10000);
    dense.recordValue(100e9);
    const reference = dense.copyCorrectedForCoordinatedOmission(10e6);
    // 20,000 plus a few: the correction starts from the top of the 100 s bucket (67 ms wide in ns).
    assert.equal(corrected.totalCount, reference.totalCount);
    assert.ok(Math.abs(corrected.totalCount - 20000) <= 10);
    for (const p of [50, 90, 99, 100]) assert.equal(corrected.getValueAtPercentile(p), reference.getValueAtPercentile(p));
    assert.ok(Math.abs(corrected.getValueAtPercentile(90) - 80e9) / 80e9 < 0.005);
    assert.ok(Math.abs(corrected.getValueAtPercentile(99) - 98e9) / 98e9 < 0.005);
  });

  it('has a fixed range: it refuses to resize with a coded error', () => {
    const h = createHistogram();
    h.autoResize = true;
    throwsCode(() => h.recordValue(2 ** 45), 'NINES_ERR_INVALID_ARG', /fixed at 1 ns/);
  });

  it('refuses counts that would become negative or fractional', () => {
    const h = createHistogram();
    throwsCode(() => h.setCountAtIndex(10, -1), 'NINES_ERR_INVALID_ARG');
    throwsCode(() => h.setCountAtIndex(10, 0.5), 'NINES_ERR_INVALID_ARG');
    throwsCode(() => h.setCountAtIndex(h.countsArrayLength, 1), 'NINES_ERR_INVALID_ARG');
  });
});

describe('latency/histogram: no silent overflow (latency-notes §1.8 #1)', () => {
  it('shows the library pitfall: 70,000 records in a 16-bit histogram leave a wrong p50', () => {
    const raw = hdr.build({ bitBucketSize: 16 });
    for (let i = 0; i < 70000; i++) raw.recordValue(1000);
    assert.equal(raw.totalCount, 70000);
    assert.notEqual(raw.getValueAtPercentile(50), 1000);
  });

  it('widens 16-bit counts when one bucket passes 65,535 and keeps every count', () => {
    const h = createHistogram();
    assert.equal(h.countBits, 16);
    for (let i = 0; i < 70000; i++) recordNs(h, 1000);
    recordNs(h, 5000);
    assert.equal(h.countBits, 32);
    assert.equal(h.getCountAtValue(1000), 70000);
    assert.equal(h.getValueAtPercentile(50), 1000);
    assert.equal(h.getValueAtPercentile(100), h.highestEquivalentValue(5000));
    const copy = decodeHistogram(encodeHistogram(h));
    assert.equal(copy.getCountAtValue(1000), 70000);
  });

  it('widens to float64 past 2^32 in one bucket where Int32Histogram wraps', () => {
    const h = createHistogram();
    h.recordValueWithCount(1000, 3e9);
    h.recordValueWithCount(1000, 3e9);
    assert.equal(h.countBits, 64);
    assert.equal(h.getCountAtValue(1000), 6e9);
    const raw = hdr.build();
    raw.recordValueWithCount(1000, 3e9);
    raw.recordValueWithCount(1000, 3e9);
    assert.equal(raw.getCountAtValue(1000), 6e9 % 2 ** 32, 'the library wraps silently');
  });

  it('accumulates 70,000 equal values from many histograms exactly', () => {
    const acc = createAccumulator();
    for (let part = 0; part < 7; part++) {
      const h = createHistogram();
      for (let i = 0; i < 10000; i++) recordNs(h, 2000000);
      mergeInto(acc, decodeHistogram(encodeHistogram(h)));
    }
    assert.equal(acc.totalCount, 70000);
    assert.equal(acc.getCountAtValue(2000000), 70000);
    assert.equal(acc.getValueAtPercentile(50), acc.highestEquivalentValue(2000000));
  });
});

describe('latency/histogram: mergeInto', () => {
  it('merges parts so that every percentile equals the histogram of the union', () => {
    const values = latencies(30000, 3);
    const union = createHistogram();
    for (const v of values) recordNs(union, v);
    const acc = createAccumulator();
    for (let part = 0; part < 5; part++) {
      const h = createHistogram();
      for (let i = part; i < values.length; i += 5) recordNs(h, values[i]);
      // Parts travel encoded, as they do over MQTT.
      mergeInto(acc, part % 2 ? decodeHistogram(encodeHistogram(h)) : h);
    }
    assert.equal(acc.totalCount, union.totalCount);
    for (let p = 0; p <= 100; p += 0.5) assert.equal(acc.getValueAtPercentile(p), union.getValueAtPercentile(p), `p${p}`);
    for (const p of [99.9, 99.99, 99.999]) assert.equal(acc.getValueAtPercentile(p), union.getValueAtPercentile(p));
    assert.equal(acc.mean, union.mean);
    assert.equal(acc.maxValue, union.highestEquivalentValue(union.maxValue));
    assert.equal(encodeHistogram(acc), encodeHistogram(decodeHistogram(encodeHistogram(union))));
  });

  it('merges library histograms of another range exactly and keeps the max at the top of its bucket', () => {
    // The library's add() re-records each bucket at its lowest value here and lowers the max (latency-notes §1.5).
    const narrow = hdr.build({ autoResize: false, highestTrackableValue: 1e9 });
    narrow.recordValue(1000000);
    narrow.recordValue(999999999);
    const acc = createAccumulator();
    recordNs(acc, 5);
    mergeInto(acc, narrow);
    assert.equal(acc.totalCount, 3);
    assert.equal(acc.getValueAtPercentile(100), narrow.highestEquivalentValue(999999999));
    assert.equal(acc.maxValue, narrow.highestEquivalentValue(999999999));
    assert.equal(acc.getCountAtValue(1000000), 1);
  });

  it('takes a histogram spanning 1 ns to 1 h into a fresh accumulator without a range error', () => {
    const wide = createHistogram();
    recordNs(wide, 1);
    recordNs(wide, C.HIST_HIGHEST_NS);
    const acc = createAccumulator();
    const before = acc.estimatedFootprintInBytes;
    mergeInto(acc, wide);
    assert.equal(acc.totalCount, 2);
    assert.equal(acc.getValueAtPercentile(100), wide.highestEquivalentValue(C.HIST_HIGHEST_NS));
    assert.ok(acc.estimatedFootprintInBytes > before, 'pages are allocated as buckets are touched');
    // The library's own autoResize histogram grown to 1 h merges too.
    const grown = hdr.build();
    grown.recordValue(C.HIST_HIGHEST_NS);
    mergeInto(acc, grown);
    assert.equal(acc.totalCount, 3);
  });

  it('refuses a decoded, interval or library histogram as the merge target', () => {
    const h = createHistogram();
    recordNs(h, 1000);
    const decoded = decodeHistogram(encodeHistogram(h));
    throwsCode(() => mergeInto(decoded, h), 'NINES_ERR_INVALID_ARG', /createAccumulator/);
    throwsCode(() => mergeInto(h, decoded), 'NINES_ERR_INVALID_ARG');
    throwsCode(() => mergeInto(hdr.build({ bitBucketSize: 64 }), h), 'NINES_ERR_INVALID_ARG');
  });

  it('refuses histograms of another configuration instead of merging them lossily', () => {
    const acc = createAccumulator();
    throwsCode(() => mergeInto(acc, hdr.build({ numberOfSignificantValueDigits: 2 })), 'NINES_ERR_INVALID_ARG', /3 significant digits/);
    throwsCode(() => mergeInto(acc, hdr.build({ lowestDiscernibleValue: 1000, highestTrackableValue: 1e9 })), 'NINES_ERR_INVALID_ARG');
    throwsCode(() => mergeInto(acc, { totalCount: 1 }), 'NINES_ERR_INVALID_ARG');
    throwsCode(() => mergeInto(acc, acc), 'NINES_ERR_INVALID_ARG');
  });

  it('refuses a corrupt source and leaves the accumulator unchanged', () => {
    const acc = createAccumulator();
    recordNs(acc, 1000);
    const nan = hdr.build();
    nan.recordValue(500);
    nan.recordValue(NaN);
    throwsCode(() => mergeInto(acc, nan), 'NINES_ERR_BAD_HISTOGRAM', /NaN/);
    const beyond = hdr.build();
    beyond.recordValue(2 ** 50);
    throwsCode(() => mergeInto(acc, beyond), 'NINES_ERR_BAD_HISTOGRAM', /beyond the 1 h range/);
    assert.equal(acc.totalCount, 1);
    assert.equal(acc.getValueAtPercentile(100), 1000);
  });
});

describe('latency/histogram: encode', () => {
  it('writes V2 compressed base64 starting "HISTF" that the library decodes to the same counts', () => {
    const h = createHistogram();
    for (const v of latencies(5000, 4)) recordNs(h, v);
    const b64 = encodeHistogram(h);
    assert.match(b64, /^HISTF/);
    const lib = hdr.decodeFromCompressedBase64(b64);
    assert.equal(lib.totalCount, h.totalCount);
    for (const p of PERCENTILES) assert.equal(lib.getValueAtPercentile(p), h.getValueAtPercentile(p));
  });

  it('round-trips through decodeHistogram with identical counts and re-encoding', () => {
    const h = createHistogram();
    for (const v of latencies(5000, 5)) recordNs(h, v);
    const b64 = encodeHistogram(h);
    const copy = decodeHistogram(b64);
    assert.ok(copy instanceof PagedHistogram);
    assert.equal(copy.totalCount, h.totalCount);
    assert.equal(encodeHistogram(copy), b64);
    for (const p of PERCENTILES) assert.equal(copy.getValueAtPercentile(p), h.getValueAtPercentile(p));
  });

  it('refuses to encode something that is not a nines histogram', () => {
    throwsCode(() => encodeHistogram({}), 'NINES_ERR_INVALID_ARG', /HdrHistogram/);
    throwsCode(() => encodeHistogram(hdr.build({ numberOfSignificantValueDigits: 5 })), 'NINES_ERR_INVALID_ARG');
  });
});
