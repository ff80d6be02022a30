'use strict';

const assert = require('node:assert/strict');
const { READ, startModbus, startAscii, rejectionOf, healthLog, deviceFixture } = require('./helpers');

describe('Device: timeouts', function () {
  const t = deviceFixture();

  it('times requests out on a stalled device: the one on the wire from the client, the waiting ones from the queue', async function () {
    const { sim, device } = await t.open(await startModbus(), { timeoutMs: 1000 });
    sim.faults.stall(5000);
    const wire = rejectionOf(device.request(READ));
    // Shorter timeouts than the request on the wire: they can only expire while queued
    const waiting = [rejectionOf(device.request(READ, { timeoutMs: 200 })), rejectionOf(device.user('other').request(READ, { timeoutMs: 250 }))];
    for (const err of await Promise.all(waiting)) {
      assert.equal(err.code, 'NINES_ERR_REPLY_TIMEOUT');
      assert.equal(err.details.queued, true);
      assert.equal(err.sentNs, undefined, 'never sent');
    }
    const err = await wire;
    assert.equal(err.code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.equal(typeof err.sentNs, 'bigint');
    assert.notEqual(err.details.queued, true);
    assert.equal(device.stats.timeouts, 3);
    assert.equal(device.stats.users.other.timeouts, 1);
    assert.equal(device.health.state, 'up', 'a stall is not a disconnection');
  });

  it('arms one timer for a thousand queued requests, not one per request', async function () {
    const { sim, device } = await t.open(await startModbus(), { timeoutMs: 300, queueMax: 1000 });
    sim.faults.stall(5000);
    const realSetTimeout = global.setTimeout;
    let armed = 0;
    global.setTimeout = (...args) => { armed++; return realSetTimeout(...args); };
    let all;
    try {
      // Synchronous: only the timers these calls arm are counted
      all = Array.from({ length: 1000 }, () => rejectionOf(device.request(READ)));
    } finally {
      global.setTimeout = realSetTimeout;
    }
    assert.ok(armed <= 2, `${armed} timers armed (the client's for the request on the wire, the device's for the queue)`);
    const errs = await Promise.all(all);
    assert.ok(errs.every((e) => e.code === 'NINES_ERR_REPLY_TIMEOUT'));
    // A request whose turn comes with time left is still sent (and times out on the wire): a few may be
    const queued = errs.filter((e) => e.details.queued);
    assert.ok(queued.length >= 990, `${queued.length} expired in the queue`);
    assert.ok(queued.every((e) => e.sentNs === undefined));
  });

  it('expires queued requests with mixed timeouts each at its own deadline', async function () {
    const { device } = await t.open(await startModbus({ faults: 'latency=1500ms' }), { timeoutMs: 5000 });
    const settled = [];
    const track = (name, p) => rejectionOf(p).then((e) => { settled.push(name); return e; });
    device.request(READ).catch(() => {}); // holds the connection for 1.5 s
    // Deadlines out of order in one user's FIFO: 800 ms first, then 200 ms
    const slow = track('800', device.request(READ, { timeoutMs: 800 }));
    const fast = track('200', device.request(READ, { timeoutMs: 200 }));
    const [a, b] = await Promise.all([slow, fast]);
    assert.deepEqual(settled, ['200', '800']);
    for (const e of [a, b]) {
      assert.equal(e.code, 'NINES_ERR_REPLY_TIMEOUT');
      assert.equal(e.details.queued, true);
    }
    assert.equal(a.details.timeoutMs, 800);
  });

  it('hands a request that waited only the rest of its time', async function () {
    // Each reply takes 400 ms: the second request waits at least that, so what is left of its 700 ms cannot cover its own reply
    const { device, rec } = await t.open(await startModbus({ faults: 'latency=400ms' }), { timeoutMs: 2000 });
    const first = device.request(READ);
    const second = rejectionOf(device.request(READ, { timeoutMs: 700 }));
    await first;
    const err = await second;
    assert.equal(rec.calls[0].timeoutMs, 2000, 'a request that did not wait gets its whole timeout');
    const handed = rec.calls[1].timeoutMs;
    assert.ok(handed >= 1 && handed <= 310, `handed over with ${handed} ms left of 700`);
    // It was sent, then timed out on the wire with what was left
    assert.equal(err.code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.equal(typeof err.sentNs, 'bigint');
    assert.equal(err.details.timeoutMs, handed);
  });

  it('times an ASCII request out on a stall and serves the next one after it, without a health change', async function () {
    const { sim, device } = await t.open(await startAscii(), { name: 'ed588', timeoutMs: 2000 }, { open: false });
    const log = healthLog(device);
    await device.open();
    sim.faults.stall(600);
    const err = await rejectionOf(device.request('@01', { timeoutMs: 150 }));
    assert.equal(err.code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.equal(typeof err.sentNs, 'bigint');
    // The client opens a fresh connection before the next command (a late reply cannot be taken for it)
    const reply = await device.request('@01');
    assert.equal(typeof reply.doneNs, 'bigint');
    assert.deepEqual(log.map((h) => h.state), ['up']);
    assert.equal(device.health.connections.open, 1);
  });
});
