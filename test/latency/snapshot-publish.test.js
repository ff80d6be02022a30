'use strict';

const assert = require('node:assert/strict');
const { Recorder, encodeSnapshot, decodeSnapshot, latencyPayload, decodeHistogram, summarize } = require('../../gateway/latency');

describe('publishing a snapshot that crossed a thread', () => {
  it('reuses the encoding the worker made for hist, and it still decodes to the published figures', () => {
    const rec = new Recorder();
    for (let i = 1; i <= 1000; i++) rec.recordOk(i * 1000, i * 500, 100);
    const wire = encodeSnapshot(rec.snapshot());
    const snap = decodeSnapshot(wire);
    const payload = latencyPayload(snap, { gateway: 'g', job: 'j', target: 'ascii://h:9500', op: '@AA' });
    assert.equal(payload.hist, wire.response, 'no second encoding on the main thread');
    const s = summarize(decodeHistogram(payload.hist));
    for (const k of ['p50', 'p99', 'p99_9', 'max']) assert.equal(s[k], payload[k], k);
  });

  it('encodes the histogram itself for a snapshot that never crossed a thread', () => {
    const rec = new Recorder();
    rec.recordOk(5e6, 4e6, 1e3);
    const payload = latencyPayload(rec.snapshot(), { gateway: 'g', job: 'j', target: 'ascii://h:9500', op: '@AA' });
    assert.match(payload.hist, /^HISTF/);
    assert.equal(decodeHistogram(payload.hist).totalCount, 1);
  });
});
