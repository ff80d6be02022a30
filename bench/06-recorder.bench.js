'use strict';

/**
 * Question 6: what does measuring cost? Nanoseconds per recorded sample (nines' guarded recordNs, a
 * Recorder's recordOk with its three histograms, and hdr-histogram-js's bare recordValue as the
 * baseline); encode size and time of an interval histogram; merging 1,000 interval histograms
 * (already decoded, and from their base64); building and publishing the latency summaries of 1,000
 * jobs through the nines Publisher into an embedded aedes broker until a subscriber has them all.
 */

const path = require('node:path');
const { options, Row, interleave, run } = require('./lib/question');
const { createHist } = require('./lib/hist');

const L = require(path.join(__dirname, '..', 'gateway', 'latency'));
const now = process.hrtime.bigint;

/**
 * Realistic device latencies: mostly 20–200 µs, a tail to a few ms (deterministic, no Math.random).
 * @param {number} n
 * @returns {number[]} integer ns
 */
function samples (n) {
  const out = new Array(n);
  let s = 12345;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    const u = s / 0x7fffffff;
    out[i] = Math.round(20000 * Math.exp(u * u * u * 5.5));
  }
  return out;
}

/** @returns {number} ns per call of fn(v) over the values, after a warm-up pass */
function perOp (values, fn) {
  for (let i = 0; i < Math.min(values.length, 100000); i++) fn(values[i]);
  const t0 = now();
  for (let i = 0; i < values.length; i++) fn(values[i]);
  return Number(now() - t0) / values.length;
}

/** @returns {object} an interval histogram with n samples */
function interval (values, n, offset = 0) {
  const h = L.createHistogram();
  for (let i = 0; i < n; i++) L.recordNs(h, values[(i + offset) % values.length]);
  return h;
}

/**
 * Builds 1,000 jobs' summaries and publishes them through the nines Publisher into an embedded broker,
 * until a subscriber has received them all (QoS 1).
 * @returns {Promise<{buildMs: number, publishMs: number, bytesPerMsg: number}>}
 */
async function publish1000 (values, jobs) {
  const { startEmbeddedBroker } = require(path.join(__dirname, '..', 'gateway', 'runtime', 'mqtt', 'broker'));
  const { Publisher } = require(path.join(__dirname, '..', 'gateway', 'runtime', 'mqtt', 'publisher'));
  const mqtt = require('mqtt');
  const broker = await startEmbeddedBroker({ port: 0 });
  const sub = await mqtt.connectAsync(broker.url, { clientId: 'bench-sub' });
  await sub.subscribeAsync('nines/bench/+/latency', { qos: 1 });
  const pub = new Publisher({ url: broker.url, gatewayId: 'bench', qos: 1, bufferMax: jobs * 2 });
  pub.on('error', () => {});
  await pub.start();
  const snaps = [];
  for (let j = 0; j < jobs; j++) {
    const rec = new L.Recorder({ policy: 'capped' });
    for (let i = 0; i < 200; i++) { const v = values[(i * 7 + j) % values.length]; rec.recordOk(v, v, 1000); }
    snaps.push(rec.snapshot());
  }
  let got = 0;
  let bytes = 0;
  let all;
  const received = new Promise((resolve) => { all = resolve; });
  sub.on('message', (t, p) => { bytes += p.length; if (++got === jobs) all(); });
  const t0 = now();
  const payloads = snaps.map((s, j) => L.latencyPayload(s, { gateway: 'bench', job: `job-${j}`, target: 'modbus+tcp://127.0.0.1:5020', op: 'fc3-0x10' }));
  const t1 = now();
  for (let j = 0; j < jobs; j++) pub.publishLatency(`job-${j}`, payloads[j]);
  const timer = setTimeout(all, 20000);
  await received;
  clearTimeout(timer);
  const t2 = now();
  await pub.stop();
  await sub.endAsync();
  await broker.close();
  if (got < jobs) throw new Error(`the subscriber got ${got} of ${jobs} summaries within 20 s`);
  return { buildMs: Number(t1 - t0) / 1e6, publishMs: Number(t2 - t1) / 1e6, bytesPerMsg: bytes / jobs };
}

run(async () => {
  const o = options();
  const n = o.quick ? 200000 : 2000000;
  const values = samples(n);
  const rec = {
    record: new Row('record', 'nines recordNs (guarded, one histogram)'),
    recorder: new Row('recorder-ok', 'nines Recorder.recordOk (response, service, lag)'),
    raw: new Row('hdr-raw', 'hdr-histogram-js recordValue (baseline, unguarded)')
  };
  const enc = {
    encode: new Row('encode', 'encodeHistogram, interval of 100,000 samples'),
    decode: new Row('decode', 'decodeHistogram (checked) of the same')
  };
  const agg = {
    merge: new Row('merge-1000', 'merge 1,000 interval histograms (decoded)'),
    mergeB64: new Row('merge-1000-b64', 'decode + merge 1,000 from base64'),
    publish: new Row('publish-1000', 'summaries of 1,000 jobs → Publisher → aedes → subscriber')
  };
  const big = interval(values, 100000);
  const b64 = L.encodeHistogram(big);
  const intervals = Array.from({ length: 1000 }, (_, i) => interval(values, 1000, i * 977));
  const intervalsB64 = intervals.map((h) => L.encodeHistogram(h));
  const timeEach = (k, fn) => { for (let i = 0; i < 3; i++) fn(); const t0 = now(); for (let i = 0; i < k; i++) fn(); return Number(now() - t0) / k; };
  await interleave(o.rounds, [
    { row: rec.record, run: async () => { const h = L.createHistogram(); rec.record.add({ nsPerOp: perOp(values, (v) => L.recordNs(h, v)) }); } },
    { row: rec.recorder, run: async () => { const r = new L.Recorder(); rec.recorder.add({ nsPerOp: perOp(values, (v) => r.recordOk(v, v, 900)) }); } },
    { row: rec.raw, run: async () => { const h = createHist(); rec.raw.add({ nsPerOp: perOp(values, (v) => h.recordValue(v)) }); } },
    { row: enc.encode, run: async () => { enc.encode.add({ nsPerOp: timeEach(o.quick ? 20 : 200, () => L.encodeHistogram(big)), bytes: b64.length }); } },
    { row: enc.decode, run: async () => { enc.decode.add({ nsPerOp: timeEach(o.quick ? 20 : 200, () => L.decodeHistogram(b64)), bytes: b64.length }); } },
    {
      row: agg.merge,
      run: async () => {
        const t0 = now();
        const acc = L.createAccumulator();
        for (const h of intervals) L.mergeInto(acc, h);
        agg.merge.add({ totalNs: Number(now() - t0), perItemNs: Number(now() - t0) / 1000 });
      }
    },
    {
      row: agg.mergeB64,
      run: async () => {
        const t0 = now();
        const acc = L.createAccumulator();
        for (const s of intervalsB64) L.mergeInto(acc, L.decodeHistogram(s));
        agg.mergeB64.add({ totalNs: Number(now() - t0), perItemNs: Number(now() - t0) / 1000 });
      }
    },
    {
      row: agg.publish,
      run: async () => {
        const r = await publish1000(values, 1000);
        agg.publish.add({ totalNs: (r.buildMs + r.publishMs) * 1e6, perItemNs: (r.buildMs + r.publishMs) * 1e3, buildNs: r.buildMs * 1e6, bytes: r.bytesPerMsg });
      }
    }
  ]);
  return {
    question: 6,
    name: 'recorder',
    title: 'Recorder and publisher cost',
    sections: [
      { title: `Recording (${n.toLocaleString('en-US')} samples per round)`, kind: 'custom', rows: Object.values(rec), columns: [{ key: 'nsPerOp', label: 'ns per sample', unit: 'num' }] },
      { title: 'Encoding (HdrHistogram V2, compressed base64)', kind: 'custom', rows: Object.values(enc), columns: [{ key: 'bytes', label: 'size', unit: 'bytes', spread: false }, { key: 'nsPerOp', label: 'time per call', unit: 'ns' }] },
      {
        title: '1,000 intervals / jobs',
        kind: 'custom',
        rows: Object.values(agg),
        columns: [{ key: 'totalNs', label: 'total', unit: 'ns' }, { key: 'perItemNs', label: 'per item', unit: 'ns' }, { key: 'buildNs', label: 'of which building payloads', unit: 'ns' }, { key: 'bytes', label: 'bytes per message', unit: 'bytes', spread: false }]
      }
    ],
    notes: ['Publish: from the first publishLatency call until a QoS 1 subscriber on the same embedded broker has all 1,000 messages; building the 1,000 payloads (summaries + encoded histograms) is included and also shown alone.']
  };
});
