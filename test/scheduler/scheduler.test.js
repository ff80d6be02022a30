'use strict';

const assert = require('node:assert/strict');
const { startSchedule } = require('../../gateway/scheduler');
const { Recorder } = require('../../gateway/latency');
const { NinesError } = require('../../gateway/base/errors');

/**
 * A device stand-in for the scheduler's own bookkeeping: answers after `serviceMs` on a timer and
 * records how many requests it had outstanding at once. Real devices and sockets are used in
 * pause.test.js and the driver suites; here we check the plan.
 */
function fakeClient ({ serviceMs = 0, fail } = {}) {
  const c = {
    outstanding: 0,
    maxOutstanding: 0,
    ops: [],
    request (op) {
      c.outstanding++;
      c.maxOutstanding = Math.max(c.maxOutstanding, c.outstanding);
      c.ops.push(op);
      const sentNs = process.hrtime.bigint();
      return new Promise((resolve, reject) => {
        setTimeout(() => {
          c.outstanding--;
          const doneNs = process.hrtime.bigint();
          if (fail && fail(op)) {
            const e = new NinesError(fail(op), 'failed');
            e.sentNs = sentNs;
            reject(e);
          } else resolve({ ok: true, op, sentNs, doneNs });
        }, serviceMs);
      });
    }
  };
  return c;
}

describe('scheduler', () => {
  it('plans exactly count requests split over the connections, one at a time per connection', async () => {
    const clients = [fakeClient(), fakeClient(), fakeClient()];
    const rec = new Recorder();
    const run = startSchedule({ clients, nextOp: (i) => i, ratePerSec: 2000, count: 100, recorder: rec });
    const out = await run.done;
    assert.equal(out.planned, 100);
    assert.equal(out.sent, 100);
    const snap = rec.snapshot();
    assert.equal(snap.ok, 100);
    for (const c of clients) assert.equal(c.maxOutstanding, 1);
    // every seq handed out once
    const all = clients.flatMap((c) => c.ops).sort((a, b) => a - b);
    assert.deepEqual(all, Array.from({ length: 100 }, (_, i) => i));
  });

  it('closed loop sends the next request as soon as the previous reply is in', async () => {
    const c = fakeClient();
    const rec = new Recorder({ policy: 'closed' });
    const out = await startSchedule({ clients: [c], nextOp: () => 'x', count: 50, recorder: rec }).done;
    assert.equal(out.sent, 50);
    assert.equal(rec.snapshot().ok, 50);
    assert.equal(c.maxOutstanding, 1);
  });

  it('a fixed rate never sends before the intended time: 40 requests at 200/s take at least 190 ms', async () => {
    const rec = new Recorder();
    const t0 = process.hrtime.bigint();
    await startSchedule({ clients: [fakeClient()], nextOp: () => 1, ratePerSec: 200, count: 40, recorder: rec }).done;
    const elapsedMs = Number(process.hrtime.bigint() - t0) / 1e6;
    // the 40th request is intended at 39/200 s = 195 ms
    assert.ok(elapsedMs >= 190, `took ${elapsedMs} ms`);
  });

  it('stops planning at durationMs and on stop()', async () => {
    const rec = new Recorder();
    const out = await startSchedule({ clients: [fakeClient()], nextOp: () => 1, ratePerSec: 100, durationMs: 100, recorder: rec }).done;
    assert.ok(out.planned >= 9 && out.planned <= 10, `planned ${out.planned}`);
    const run = startSchedule({ clients: [fakeClient()], nextOp: () => 1, ratePerSec: 100, recorder: new Recorder() });
    setTimeout(() => run.stop(), 50);
    const o2 = await run.done;
    assert.ok(o2.planned >= 1 && o2.planned <= 10, `planned ${o2.planned}`);
  });

  it('counts timeouts and errors as samples with their response times, and carries on', async () => {
    const c = fakeClient({ serviceMs: 5, fail: (op) => (op % 3 === 0 ? 'NINES_ERR_REPLY_TIMEOUT' : op % 3 === 1 ? 'NINES_ERR_DEVICE_INVALID' : null) });
    const rec = new Recorder();
    const errors = [];
    await startSchedule({ clients: [c], nextOp: (i) => i, ratePerSec: 500, count: 30, recorder: rec, onError: (e) => errors.push(e.code) }).done;
    const snap = rec.snapshot();
    assert.equal(snap.timeouts, 10);
    assert.equal(snap.errors, 10);
    assert.equal(snap.ok, 10);
    assert.equal(snap.response.totalCount, 30, 'every outcome is a response-time sample');
    // a failure's response time includes the 5 ms it took
    assert.ok(snap.response.getValueAtPercentile(0) >= 4e6);
    assert.equal(errors.length, 20);
  });

  it('drives a client with submit() through it, without a promise, and asks for values only when onReply reads them', async () => {
    /** a submit()-only stand-in: answers each request on a timer with the client's own reply object */
    const submitClient = () => {
      const c = {
        wants: [],
        own: { ok: true, data: undefined, sentNs: 0n, doneNs: 0n },
        request () { throw new Error('the promise path must not be used'); },
        submit (op, timeoutMs, h) {
          c.wants.push(h.wantsData);
          const sentNs = process.hrtime.bigint();
          setTimeout(() => {
            c.own.sentNs = sentNs;
            c.own.doneNs = process.hrtime.bigint();
            c.own.data = h.wantsData === false ? undefined : [op];
            h.onReply(c.own);
          }, 1);
        }
      };
      return c;
    };
    const quiet = submitClient();
    const rec = new Recorder({ policy: 'closed' });
    const out = await startSchedule({ clients: [quiet], nextOp: (i) => i, count: 20, recorder: rec }).done;
    assert.equal(out.sent, 20);
    assert.equal(rec.snapshot().ok, 20);
    assert.ok(quiet.wants.every((w) => w === false), 'no values decoded when nobody reads them');
    const reading = submitClient();
    const seen = [];
    await startSchedule({ clients: [reading], nextOp: (i) => i, count: 5, recorder: new Recorder(), onReply: (r) => seen.push(r.data[0]) }).done;
    assert.deepEqual(seen, [0, 1, 2, 3, 4]);
    assert.ok(reading.wants.every((w) => w === true));
  });

  it('closed loop: dispatch lag runs from the previous reply\'s completion to the next write', async () => {
    const rec = new Recorder({ policy: 'closed' });
    await startSchedule({ clients: [fakeClient({ serviceMs: 2 })], nextOp: () => 1, count: 20, recorder: rec }).done;
    const snap = rec.snapshot();
    assert.equal(snap.lag.totalCount, 20);
    // the engine's own turn between a reply and the next write: well under the 2 ms the device takes
    assert.ok(snap.lag.getValueAtPercentile(50) < 1e6, `lag p50 ${snap.lag.getValueAtPercentile(50)} ns`);
    assert.ok(snap.service.getValueAtPercentile(50) >= 1.5e6);
  });

  it('a warm-up runs first in the same schedule: onWarm once after it, then count, durationMs and the figures count from there', async () => {
    const c = fakeClient();
    const rec = new Recorder({ policy: 'closed' });
    const warmedAt = [];
    const run = startSchedule({ clients: [c], nextOp: (i) => i, count: 30, warmup: 20, recorder: rec, onWarm: (final) => { warmedAt.push([c.ops.length, final]); rec.discard(); } });
    const out = await run.done;
    assert.deepEqual(warmedAt, [[10, false], [20, true]], 'onWarm halfway (a rehearsal) and after the warm-up\'s 20 requests');
    assert.equal(out.planned, 30);
    assert.equal(out.sent, 30);
    assert.equal(run.completed, 30);
    assert.equal(c.ops.length, 50, 'the warm-up\'s requests and the count\'s');
    assert.deepEqual(c.ops.slice(18, 22), [18, 19, 20, 21], 'one sequence, no gap between them');
    assert.equal(rec.snapshot().ok, 30);
    // by duration: the duration starts once the warm-up is over
    const t0 = process.hrtime.bigint();
    let warmNs = null;
    const timed = await startSchedule({ clients: [fakeClient({ serviceMs: 1 })], nextOp: () => 1, durationMs: 60, warmup: 20, recorder: new Recorder(), onWarm: (final) => { if (final) warmNs = process.hrtime.bigint(); } }).done;
    assert.ok(warmNs !== null && timed.startNs >= warmNs - 1000000n && timed.startNs <= warmNs + 1000000n, 'the run starts when the warm-up ends');
    assert.ok(Number(process.hrtime.bigint() - t0) / 1e6 >= 60 + 15, 'the warm-up does not eat the duration');
  });

  it('rejects bad options with codes naming the field', () => {
    const rec = new Recorder();
    const base = { clients: [fakeClient()], nextOp: () => 1, recorder: rec };
    for (const [patch, field] of [
      [{ clients: [] }, 'clients'],
      [{ nextOp: 'x' }, 'nextOp'],
      [{ ratePerSec: -1 }, 'ratePerSec'],
      [{ policy: 'fast' }, 'policy'],
      [{ count: 1.5 }, 'count'],
      [{ warmup: -1 }, 'warmup'],
      [{ recorder: {} }, 'recorder']
    ]) {
      assert.throws(() => startSchedule({ ...base, ...patch }), (e) => e.code === 'NINES_ERR_INVALID_ARG' && e.details.field === field);
    }
  });
});
