'use strict';

/**
 * The merge node's window stays bounded whatever arrives: forged seq jumps, floods of distinct
 * job names (issue: `nines watch` and the merge node grew without bound).
 */

const assert = require('node:assert/strict');
const { LatencyWindow, MAX_KEYS, MAX_SEQ_JUMP } = require('../../nodes/lib/latency-window');
const latency = require('../../gateway/latency');

function payload (job, seq, end, gateway = 'gw') {
  return { gateway, job, seq, start: end - 1000, end, count: 1, ok: 1, errors: 0, timeouts: 0, skipped: 0 };
}

describe('nines-latency-merge window bounds', () => {
  const hist = latency.createHistogram();
  hist.recordValue(1000);

  it('a forged seq jump is a resync, not billions of missed summaries', () => {
    const w = new LatencyWindow({ latency });
    w.add(payload('j', 1, 1000), hist);
    w.add(payload('j', 9e15, 2000), hist);
    w.add(payload('j', 9e15 + 2, 3000), hist);
    const s = w.summary('j');
    assert.equal(s.resyncs, 1);
    assert.equal(s.missed, 1, 'the ordinary gap after the resync still counts');
  });

  it('a jump up to the bound is counted as missed', () => {
    const w = new LatencyWindow({ latency });
    w.add(payload('j', 1, 1000), hist);
    w.add(payload('j', 2 + MAX_SEQ_JUMP, 2000), hist);
    assert.equal(w.summary('j').missed, MAX_SEQ_JUMP);
  });

  it('a flood of distinct job names keeps at most MAX_KEYS keys and streams, and counts what it forgot', () => {
    const w = new LatencyWindow({ latency, windowMs: 3600000 });
    const n = MAX_KEYS + 500;
    for (let i = 0; i < n; i++) w.add(payload(`job-${i}`, 1, 1000 + i), hist);
    assert.equal(w.keys.size, MAX_KEYS);
    assert.equal(w.lastSeq.size, MAX_KEYS);
    assert.equal(w.forgottenKeys, 500);
    assert.equal(w.forgottenStreams, 500);
    assert.equal(w.summary('job-0'), null, 'the oldest went');
    assert.notEqual(w.summary(`job-${n - 1}`), null, 'the newest stays');
  });

  it('a payload larger than the cap is refused before it is decoded', () => {
    const { MAX_PAYLOAD_CHARS } = require('../../gateway/latency/summary');
    assert.throws(() => latency.parseLatencyPayload('x'.repeat(MAX_PAYLOAD_CHARS + 1)), (err) => err.code && /at most/.test(err.message));
  });
});
