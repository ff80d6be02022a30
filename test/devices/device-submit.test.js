'use strict';

// DeviceUser#submit: a device's request without a promise (issue 11), what the scheduler's lanes use.
// The same fairness, queues, deadlines and counts as request(); outcomes go to a handler, never from
// within submit(); the reply a handler gets may be the client's own, lent until onReply returns.

const assert = require('node:assert/strict');
const { startSchedule } = require('../../gateway/scheduler');
const { Recorder } = require('../../gateway/latency');
const { READ, startModbus, startAscii, deviceFixture } = require('./helpers');
const { until } = require('../helpers/wait');

/** A handler that records outcomes, resolving `settled(n)` once n of them came. */
function handler (wantsData) {
  const h = {
    wantsData,
    replies: [],
    errors: [],
    onReply (reply) { h.replies.push({ data: reply.data, sentNs: reply.sentNs, doneNs: reply.doneNs }); },
    onError (err) { h.errors.push(err); },
    settled: (n) => until(() => h.replies.length + h.errors.length >= n, `${n} outcomes`)
  };
  return h;
}

describe('Device: submit()', function () {
  const t = deviceFixture();

  it('goes straight to a free connection, through the client\'s submit(), and counts like request()', async function () {
    const { device, rec } = await t.open(await startModbus());
    const h = handler();
    device.user('a').submit(READ, undefined, h);
    await h.settled(1);
    assert.equal(h.replies.length, 1);
    assert.ok(Array.isArray(h.replies[0].data) && h.replies[0].data.length === 2);
    assert.ok(h.replies[0].doneNs > h.replies[0].sentNs);
    assert.deepEqual(rec.calls, [{ timeoutMs: 1000, submit: true }]);
    const s = device.stats;
    assert.equal(s.requests, 1);
    assert.equal(s.ok, 1);
    assert.equal(s.users.a.ok, 1);
    assert.equal(s.inFlight, 0);
  });

  it('queues behind a busy connection, is served in turn with request() callers, and gets the rest of its time', async function () {
    const { device, rec } = await t.open(await startModbus({ faults: 'latency=60ms' }), { timeoutMs: 2000 });
    const order = [];
    const first = device.user('a').request(READ).then(() => order.push('a'));
    const h = handler();
    const onReply = h.onReply;
    h.onReply = (r) => { order.push('b'); onReply(r); };
    device.user('b').submit(READ, 1000, h);
    const third = device.user('c').request(READ).then(() => order.push('c'));
    await Promise.all([first, third, h.settled(1)]);
    assert.deepEqual(order, ['a', 'b', 'c']);
    assert.equal(rec.busyHandOvers, 0, 'handed only to a free client');
    const handed = rec.calls[1];
    assert.equal(handed.submit, true);
    assert.ok(handed.timeoutMs > 800 && handed.timeoutMs < 1000, `handed over with ${handed.timeoutMs} ms of 1000 left`);
  });

  it('fails a queued request whose deadline passes with NINES_ERR_REPLY_TIMEOUT (queued), counted as a timeout', async function () {
    const { device } = await t.open(await startModbus({ faults: 'latency=300ms' }), { timeoutMs: 2000 });
    device.request(READ).catch(() => {}); // holds the connection for 300 ms
    const h = handler();
    device.user('b').submit(READ, 100, h);
    await h.settled(1);
    assert.equal(h.errors[0].code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.equal(h.errors[0].details.queued, true);
    assert.equal(device.stats.users.b.timeouts, 1);
  });

  it('refuses on a microtask, never within submit(): a full queue, a bad timeout, a closed user, a closed device', async function () {
    const { device } = await t.open(await startModbus({ faults: 'latency=100ms' }));
    const user = device.user('a', { queueMax: 1 });
    const h = handler();
    user.submit(READ, undefined, h); // on the wire
    user.submit(READ, undefined, h); // queued
    user.submit(READ, undefined, h); // queue full
    user.submit(READ, 0, h); // not a timeout
    assert.equal(h.errors.length, 0, 'nothing within submit()');
    await h.settled(2);
    assert.deepEqual(h.errors.map((e) => e.code), ['NINES_ERR_QUEUE_FULL', 'NINES_ERR_INVALID_ARG']);
    assert.equal(device.stats.users.a.dropped, 1);
    user.close();
    user.submit(READ, undefined, h);
    await h.settled(5); // the queued one fails with the user, then this one
    const closing = device.close();
    const h2 = handler();
    device.user('b').submit(READ, undefined, h2);
    await closing;
    await h2.settled(1);
    assert.equal(h2.errors[0].code, 'NINES_ERR_CLOSED');
    assert.ok(h.errors.slice(2).every((e) => e.code === 'NINES_ERR_CLOSED'));
  });

  it('takes the promise path where the client has no submit() (ASCII) and hands the reply over', async function () {
    const { device } = await t.open(await startAscii(), { name: 'io' });
    const h = handler();
    device.user('a').submit('@01', undefined, h);
    await h.settled(1);
    assert.equal(h.replies.length, 1);
    assert.equal(device.stats.ok, 1);
  });

  it('drives the scheduler\'s lanes: jobs of several lanes share one connection, all fair and counted', async function () {
    const { sim, device, rec } = await t.open(await startModbus(), { maxConnections: 1 });
    const runs = ['job-a', 'job-b', 'job-c'].map((name) => {
      const user = device.user(name, { queueMax: 2 });
      const recorder = new Recorder({ policy: 'closed' });
      return { recorder, run: startSchedule({ clients: [user, user], nextOp: () => READ, count: 300, recorder }) };
    });
    for (const { run, recorder } of runs) {
      assert.equal((await run.done).sent, 300);
      assert.equal(recorder.totals().ok, 300);
    }
    assert.equal(sim.stats.connections, 1);
    assert.equal(rec.busyHandOvers, 0);
    assert.ok(rec.calls.every((c) => c.submit), 'every request through submit()');
    assert.equal(device.stats.ok, 900);
    assert.equal(device.stats.queued, 0);
  });
});
