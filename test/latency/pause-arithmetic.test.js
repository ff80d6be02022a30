'use strict';

/**
 * Calibration (latency-method.md rule 10, latency-notes §4.3 and §6): stall the device for S
 * seconds in the middle of a fixed-rate run covering 2·S; the reported max must be ≈ S and,
 * because half the run is stalled, p90 ≈ 0.8·S and p99 ≈ 0.98·S. Synthetic times, computed the
 * way the scheduler measures them: request k is intended at t0 + k·T (bigint ns), waits until
 * the connection is free, and its response time counts from the intended time.
 */

const assert = require('node:assert/strict');
const { Recorder } = require('../../gateway/latency/recorder');
const { summarize } = require('../../gateway/latency/summary');

const SECOND = 1_000_000_000n;
const PERIOD = 1_000_000n; // 1 kHz
const REQUESTS = 10_000; // 10 s
const SERVICE = 20_000n; // 20 µs per request when the device is not stalled
const STALL_START = 2_500_000_000n;
const STALL_END = 7_500_000_000n; // S = 5 s in the middle
const S = 5;

/**
 * One connection, one request in flight.
 * @param {'burst'|'skip'} policy burst: a late request goes as soon as the connection is free;
 *   skip: a slot that passed while the connection was busy is skipped and records what it would
 *   have seen (the wait until the blocking reply completed)
 * @returns {import('../../gateway/latency/snapshot').Snapshot}
 */
function run (policy) {
  let t = 1700000000000;
  const recorder = new Recorder({ policy, clock: { nowMs: () => t } });
  let free = 0n;
  for (let k = 0; k < REQUESTS; k++) {
    const intended = BigInt(k) * PERIOD;
    if (policy === 'skip' && intended < free) {
      recorder.recordSkipped(free - intended);
      continue;
    }
    const send = intended > free ? intended : free;
    const begin = send >= STALL_START && send < STALL_END ? STALL_END : send;
    const done = begin + SERVICE;
    free = done;
    recorder.recordOk(done - intended, done - send, send - intended);
  }
  t += Number((BigInt(REQUESTS) * PERIOD) / 1_000_000n);
  return recorder.snapshot();
}

/** @param {number} got @param {number} want @param {number} tolerance relative */
function near (got, want, tolerance) {
  assert.ok(Math.abs(got - want) / want <= tolerance, `got ${got}, want ${want} ± ${tolerance * 100} %`);
}

describe('latency/pause arithmetic: a 5 s stall in the middle of a 10 s run at 1 kHz', () => {
  it('reports max ≈ S, p90 ≈ 0.8·S and p99 ≈ 0.98·S in response time when late requests burst', () => {
    const snap = run('burst');
    assert.equal(snap.count, REQUESTS);
    const s = summarize(snap.response, { unitNs: Number(SECOND) });
    near(s.max, S, 0.01);
    near(s.p90, 0.8 * S, 0.03);
    near(s.p99, 0.98 * S, 0.01);
  });

  it('shows why service time alone is coordinated omission: it sees one slow request', () => {
    const snap = run('burst');
    const service = summarize(snap.service, { unitNs: Number(SECOND) });
    near(service.max, S, 0.01);
    assert.ok(service.p99_9 < 0.001, `service p99.9 ${service.p99_9} s`);
    const lag = summarize(snap.lag, { unitNs: Number(SECOND) });
    near(lag.max, S, 0.01);
  });

  it('gives the same arithmetic under the skip policy, with every skipped slot counted and recorded', () => {
    const snap = run('skip');
    assert.equal(snap.skipped, 5000);
    assert.equal(snap.ok, 5000);
    assert.equal(snap.count, REQUESTS);
    assert.equal(snap.response.totalCount, REQUESTS);
    const s = summarize(snap.response, { unitNs: Number(SECOND) });
    near(s.max, S, 0.01);
    near(s.p90, 0.8 * S, 0.01);
    near(s.p99, 0.98 * S, 0.01);
  });
});
