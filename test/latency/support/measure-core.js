'use strict';

/**
 * Measures the latency core (not a test; mocha runs only *.test.js). Each figure is taken in its
 * own fresh process, as pino's runbench does, so one measurement's garbage cannot skew another.
 *
 *   node test/latency/support/measure-core.js          all figures
 *   node test/latency/support/measure-core.js <name>   one of: record, encode, merge, memory
 *
 * Timings are indicative: shared machines are noisy. Nothing here asserts anything.
 */

const { execFileSync } = require('node:child_process');
const os = require('node:os');
const hdr = require('hdr-histogram-js');
const C = require('../../../gateway/base/constants');
const L = require('../../../gateway/latency');
const { latencies, prng } = require('./helpers');

/** @param {() => void} fn @returns {number} ns */
function timeNs (fn) {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0);
}

/** Lag values: tens to hundreds of µs, integer ns. */
function lags (n, seed) {
  const rnd = prng(seed);
  return Array.from({ length: n }, () => Math.floor(20000 * Math.exp(rnd() * 2.3)));
}

const MEASURES = {
  record () {
    const values = latencies(1e6, 1);
    const runs = [];
    for (let round = 0; round < 5; round++) {
      const h = L.createHistogram();
      runs.push(timeNs(() => { for (let i = 0; i < values.length; i++) L.recordNs(h, values[i]); }) / values.length);
    }
    const big = values.map(BigInt);
    const hb = L.createHistogram();
    const bigint = timeNs(() => { for (let i = 0; i < big.length; i++) L.recordNs(hb, big[i]); }) / big.length;
    const lib = [];
    for (let round = 0; round < 5; round++) {
      const h = hdr.build({ autoResize: false, highestTrackableValue: C.HIST_HIGHEST_NS });
      lib.push(timeNs(() => { for (let i = 0; i < values.length; i++) h.recordValue(values[i]); }) / values.length);
    }
    const r = new L.Recorder();
    const lag = lags(values.length, 2);
    const perSample = timeNs(() => { for (let i = 0; i < values.length; i++) r.recordOk(values[i], values[i] >> 1, lag[i]); }) / values.length;
    const best = (a) => Math.min(...a.slice(1)).toFixed(0);
    return [
      `recordNs, number, 1e6 values: ${best(runs)} ns/value (best of 4 warm runs; runs ${runs.map((x) => x.toFixed(0)).join(', ')})`,
      `recordNs, bigint: ${bigint.toFixed(0)} ns/value`,
      `library Int32Histogram.recordValue, same values, no checks: ${best(lib)} ns/value`,
      `Recorder.recordOk (3 values): ${perSample.toFixed(0)} ns/sample`
    ];
  },

  encode () {
    // 10 s at 1 kHz: 10,000 samples per histogram.
    const r = new L.Recorder();
    const values = latencies(10000, 3);
    const lag = lags(10000, 4);
    for (let i = 0; i < values.length; i++) r.recordOk(values[i], Math.floor(values[i] * 0.8), lag[i]);
    const snap = r.snapshot();
    const out = [];
    for (const name of ['response', 'service', 'lag']) {
      const h = snap[name];
      for (let i = 0; i < 50; i++) L.encodeHistogram(h);
      let b64;
      const ns = timeNs(() => { for (let i = 0; i < 200; i++) b64 = L.encodeHistogram(h); }) / 200;
      out.push(`encode ${name} (10,000 samples): ${b64.length} chars base64, ${(ns / 1000).toFixed(0)} µs`);
    }
    for (let i = 0; i < 50; i++) L.summarize(snap.response);
    const sum = timeNs(() => { for (let i = 0; i < 200; i++) L.summarize(snap.response); }) / 200;
    out.push(`summarize one histogram (7 percentiles, mean, stddev): ${(sum / 1000).toFixed(0)} µs`);
    const meta = { gateway: 'gw', job: 'j', target: 'ascii://127.0.0.1:9500', op: '@01' };
    const payload = timeNs(() => { for (let i = 0; i < 100; i++) L.latencyPayload(snap, meta); }) / 100;
    out.push(`latencyPayload (3 summaries + encode): ${(payload / 1000).toFixed(0)} µs, ${JSON.stringify(L.latencyPayload(snap, meta)).length} bytes JSON`);
    const wire = timeNs(() => { for (let i = 0; i < 100; i++) L.encodeSnapshot(snap); }) / 100;
    out.push(`encodeSnapshot (3 histograms): ${(wire / 1000).toFixed(0)} µs`);
    return out;
  },

  merge () {
    const encoded = [];
    for (let i = 0; i < 1000; i++) {
      const h = L.createHistogram();
      for (const v of latencies(10000, 100 + i)) L.recordNs(h, v);
      encoded.push(L.encodeHistogram(h));
    }
    // warm up on a separate accumulator
    const warm = L.createAccumulator();
    for (let i = 0; i < 100; i++) L.mergeInto(warm, L.decodeHistogram(encoded[i]));
    const acc = L.createAccumulator();
    let decodeNs = 0;
    let mergeNs = 0;
    for (const b64 of encoded) {
      let h;
      decodeNs += timeNs(() => { h = L.decodeHistogram(b64); });
      mergeNs += timeNs(() => L.mergeInto(acc, h));
    }
    let lib = 0;
    const libAcc = hdr.build({ bitBucketSize: 64 });
    for (const b64 of encoded) lib += timeNs(() => libAcc.add(hdr.decodeFromCompressedBase64(b64)));
    const avgChars = encoded.reduce((s, b) => s + b.length, 0) / encoded.length;
    return [
      `1,000 interval histograms (10,000 samples each, ${avgChars.toFixed(0)} chars avg): decode ${(decodeNs / 1e6).toFixed(1)} ms, ` +
        `merge ${(mergeNs / 1e6).toFixed(1)} ms, total ${((decodeNs + mergeNs) / 1e6).toFixed(1)} ms (${acc.totalCount} samples)`,
      `library decodeFromCompressedBase64 + add into a 64-bit histogram, unchecked: ${(lib / 1e6).toFixed(1)} ms`,
      `summarize the merged accumulator: ${(timeNs(() => L.summarize(acc)) / 1000).toFixed(0)} µs`
    ];
  },

  memory () {
    const N = 1000;
    const meta = { gateway: 'gw', job: 'j', target: 'ascii://127.0.0.1:9500', op: '@01' };
    global.gc();
    const before = process.memoryUsage();
    const recorders = Array.from({ length: N }, () => new L.Recorder());
    // Three 1,000-sample intervals each, published and recycled (active + spare sets warm).
    for (let round = 0; round < 3; round++) {
      recorders.forEach((r, i) => {
        const values = latencies(1000, round * N + i);
        const lag = lags(1000, round * N + i + 7);
        for (let k = 0; k < values.length; k++) r.recordOk(values[k], Math.floor(values[k] * 0.8), lag[k]);
        const snap = r.snapshot();
        L.latencyPayload(snap, meta);
        r.recycle(snap);
      });
    }
    recorders.forEach((r, i) => {
      for (const v of latencies(1000, 9000 + i)) r.recordOk(v, Math.floor(v * 0.8), 30000);
    });
    global.gc();
    const after = process.memoryUsage();
    const footprint = recorders.reduce((s, r) => s + ['response', 'service', 'lag']
      .reduce((t, k) => t + r._set[k].estimatedFootprintInBytes + r._spare[k].estimatedFootprintInBytes, 0), 0);
    const mb = (b) => (b / 1e6).toFixed(1);
    return [
      `1,000 recorders (6,000 histograms, double-buffered, 1,000 samples per interval): RSS +${mb(after.rss - before.rss)} MB, ` +
        `ArrayBuffers +${mb(after.arrayBuffers - before.arrayBuffers)} MB, heap +${mb(after.heapUsed - before.heapUsed)} MB`,
      `estimatedFootprintInBytes, both sets: ${mb(footprint)} MB (${(footprint / N / 1024).toFixed(1)} KB per recorder)`,
      `for comparison, 6,000 dense 32-bit 1 h histograms would hold ${mb(6000 * hdr.build({ autoResize: false, highestTrackableValue: C.HIST_HIGHEST_NS }).estimatedFootprintInBytes)} MB`
    ];
  }
};

function main () {
  const name = process.argv[2];
  if (!name) return runAll();
  if (!Object.hasOwn(MEASURES, name)) throw new Error(`unknown measure ${name}; one of ${Object.keys(MEASURES).join(', ')}`);
  if (name === 'memory' && typeof global.gc !== 'function') return runOne(name);
  for (const line of MEASURES[name]()) console.log(`  ${line}`);
}

function runAll () {
  console.log(`Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0].model}, ${os.platform()} ${os.release()}`);
  for (const key of Object.keys(MEASURES)) {
    console.log(`${key}:`);
    runOne(key);
  }
}

/** Runs one measure in a fresh process (memory with --expose-gc, to collect before reading RSS). @param {string} key */
function runOne (key) {
  const args = key === 'memory' ? ['--expose-gc', __filename, key] : [__filename, key];
  process.stdout.write(execFileSync(process.execPath, args, { encoding: 'utf8' }));
}

if (require.main === module) main();
