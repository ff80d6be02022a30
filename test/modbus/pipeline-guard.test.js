'use strict';

// The rule that decides a device does not serve pipelined requests, driven step by step: no sockets,
// no clocks, only the order of writes, replies, timeouts and closes.

const assert = require('node:assert/strict');
const { PipelineGuard, STRIKE, FALL_BACK_AT } = require('../../gateway/drivers/modbus/pipeline-guard');

/** A request as the guard sees it */
let tids = 0;
const req = (timeoutMs = 100) => ({ overlap: -1, tid: ++tids, timeoutMs });
const MS = 1000000n;

describe('PipelineGuard', () => {
  it('falls back once three requests skipped while the device answered around them stay unanswered a further timeout', () => {
    const g = new PipelineGuard();
    const first = req();
    g.sent(first, 0);
    const overlapped = [req(), req(), req()];
    overlapped.forEach((p, i) => g.sent(p, i + 1));
    g.answered(first); // the device answered the first, and dropped the others
    for (const p of overlapped) assert.equal(g.timedOut(p, 100n * MS), false, 'suspects only: their late replies may still come');
    assert.equal(g.suspects, 3);
    assert.equal(g.skipped, 0);
    // the next timeout, after the suspects' grace (their own 100 ms again), judges them
    const later = req();
    g.sent(later, 0);
    assert.equal(g.timedOut(later, 200n * MS), true);
    assert.equal(g.skipped, 3);
    assert.equal(FALL_BACK_AT, 3 * STRIKE);
  });

  it('clears a suspect whose late reply comes: a slow pipelining device is not a device that drops', () => {
    const g = new PipelineGuard();
    const first = req();
    g.sent(first, 0);
    const slow = Array.from({ length: 16 }, () => req());
    slow.forEach((p, i) => g.sent(p, i + 1));
    g.answered(first);
    for (const p of slow) g.timedOut(p, 100n * MS);
    for (const p of slow) g.lateReply(p.tid);
    assert.equal(g.suspects, 0);
    assert.equal(g.lateAnswered, 16);
    const later = req();
    g.sent(later, 1);
    assert.equal(g.timedOut(later, 500n * MS), false);
    assert.equal(g.skipped, 0);
  });

  it('does not count a timeout of a request written alone: one in flight says nothing about pipelining', () => {
    const g = new PipelineGuard();
    for (let i = 0; i < 10; i++) {
      const p = req();
      g.sent(p, 0);
      g.answered(req());
      assert.equal(g.timedOut(p, BigInt(i) * 1000n * MS), false);
    }
    assert.equal(g.suspects, 0);
    assert.equal(g.skipped, 0);
  });

  it('does not suspect an overlapped request that timed out while the device answered nothing at all (a stalled device)', () => {
    const g = new PipelineGuard();
    const ps = [req(), req(), req(), req()];
    ps.forEach((p, i) => g.sent(p, i));
    for (const p of ps) assert.equal(g.timedOut(p, 100n * MS), false);
    assert.equal(g.suspects, 0);
  });

  it('lets answered overlaps outweigh rare losses: one skip per thousand overlaps never falls back', () => {
    const g = new PipelineGuard();
    let fellBack = false;
    let t = 0n;
    for (let round = 0; round < 20; round++) {
      // a thousand overlapped requests answered in order, each while the next was already written
      let prev = req();
      g.sent(prev, 0);
      for (let i = 0; i < 1000; i++) {
        const p = req();
        g.sent(p, 1);
        g.answered(prev);
        prev = p;
      }
      const lost = req();
      g.sent(lost, 1);
      g.answered(prev);
      t += 1000n * MS;
      fellBack = g.timedOut(lost, t) || fellBack;
    }
    assert.equal(fellBack, false);
    assert.equal(g.skipped, 19, 'each loss judged at the next one; the last still a suspect');
    assert.ok(g.overlapsAnswered > 19000);
  });

  it('falls back after three peer closes with several requests in flight, but not for closes with one', () => {
    const g = new PipelineGuard();
    assert.equal(g.peerClosed(1), false);
    assert.equal(g.peerClosed(0), false);
    assert.equal(g.peerClosed(2), false);
    assert.equal(g.peerClosed(4), false);
    assert.equal(g.peerClosed(2), true);
    assert.equal(g.peerCloses, 3);
  });

  it('marks a request overlapped only when another was in flight at its write', () => {
    const g = new PipelineGuard();
    const alone = req();
    const behind = req();
    g.sent(alone, 0);
    g.sent(behind, 1);
    assert.equal(alone.overlap, -1);
    assert.equal(behind.overlap, 0);
  });
});
