'use strict';

// A device whose connections carry several requests at once (Modbus TCP, maxInflight > 1): a
// connection is free while it has a slot, never more than maxInflight on one, fairness as before,
// and the fallback of one client becomes the whole device's, said in its health.

const assert = require('node:assert/strict');
const { READ, startModbus, healthLog, sendOrder, deviceFixture } = require('./helpers');
const { until } = require('../helpers/wait');

describe('Device: several requests in flight per connection', function () {
  this.timeout(20000);
  const t = deviceFixture();

  it('hands one connection up to maxInflight requests, never more, and gives its clients the option', async function () {
    const { sim, device, rec } = await t.open(await startModbus({ faults: 'latency=2ms' }), { maxConnections: 1, maxInflight: 4 });
    const all = [];
    for (let u = 0; u < 4; u++) for (let k = 0; k < 10; k++) all.push(device.user(`u${u}`).request(READ));
    assert.equal(device.stats.inFlight, 4, 'four on the one connection');
    assert.equal(device.stats.queued, 36);
    await Promise.all(all);
    assert.equal(rec.busyHandOvers, 0, 'a request is handed only to a client with a free slot');
    assert.deepEqual(rec.most, [4]);
    assert.equal(rec.opts[0].maxInflight, 4);
    assert.equal(sim.stats.connections, 1);
    assert.equal(device.stats.ok, 40);
    assert.deepEqual(device.health.inflight, { max: 4, effective: 4 });
    assert.equal(device.health.warning, null);
  });

  it('spreads requests over the connections before a connection carries a second', async function () {
    const { device, rec } = await t.open(await startModbus({ faults: 'latency=5ms' }), { maxConnections: 3, maxInflight: 4 });
    const three = [1, 2, 3].map(() => device.request(READ));
    assert.deepEqual(rec.clients.map((c) => c.inFlight), [1, 1, 1]);
    const more = Array.from({ length: 9 }, () => device.request(READ));
    assert.deepEqual(rec.clients.map((c) => c.inFlight), [4, 4, 4]);
    assert.equal(device.stats.queued, 0);
    const extra = device.request(READ);
    assert.equal(device.stats.queued, 1, 'every slot taken: the thirteenth waits');
    await Promise.all([...three, ...more, extra]);
    assert.equal(rec.busyHandOvers, 0);
    assert.deepEqual(rec.most, [4, 4, 4]);
  });

  it('lets a user flooding 1000 requests delay another user\'s single request by at most the slots of the connections', async function () {
    const { device } = await t.open(await startModbus(), { maxConnections: 2, maxInflight: 4, timeoutMs: 30000 });
    const done = [];
    const flood = device.user('flood', { queueMax: 1000 });
    const floods = Array.from({ length: 1000 }, () => flood.request(READ).then((r) => { done.push({ user: 'flood', sentNs: r.sentNs }); }));
    const reply = await device.user('single').request(READ);
    await Promise.all(floods);
    const ahead = done.filter((x) => x.sentNs < reply.sentNs).length;
    assert.ok(ahead <= 8, `${ahead} flood requests went before the single one on 2 connections × 4 slots`);
    assert.equal(device.stats.users.flood.ok, 1000);
  });

  it('serves three flooding users in strict turns over the slots', async function () {
    const { device } = await t.open(await startModbus({ faults: 'latency=1ms' }), { maxInflight: 3, timeoutMs: 30000 });
    const done = [];
    // the first user asks first, so its first three take the three free slots before the others ask
    const counts = { a: 33, b: 30, c: 30 };
    await Promise.all(['a', 'b', 'c'].flatMap((name) => Array.from({ length: counts[name] }, () => device.user(name).request(READ).then((r) => done.push({ user: name, sentNs: r.sentNs })))));
    const order = sendOrder(done);
    assert.deepEqual(order.slice(0, 3), ['a', 'a', 'a']);
    for (let i = 3; i < order.length; i += 3) assert.deepEqual(order.slice(i, i + 3).sort(), ['a', 'b', 'c'], `turn ${i / 3}: ${order.slice(i, i + 3)}`);
  });

  it('falls back to one in flight on every connection when one finds the device takes one at a time, says so in its health, and polls on', async function () {
    // the device drops what arrives while it serves a request (2 ms each)
    // long enough that a loaded machine's stall is no timeout once it polls at one in flight
    const { sim, device, rec } = await t.open(await startModbus({ oneAtATime: true, faults: 'latency=2ms' }), { maxConnections: 2, maxInflight: 4, timeoutMs: 1000 }, { open: false });
    const log = healthLog(device);
    await device.open();
    const counts = { ok: 0, failed: 0 };
    let stopped = false;
    const loop = async (user) => {
      while (!stopped) {
        try { await user.request(READ); counts.ok++; } catch { counts.failed++; }
      }
    };
    const loops = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((n) => loop(device.user(n)));
    await until(() => device.health.warning !== null, 'the pipelining warning in the health');
    stopped = true;
    await Promise.all(loops);
    const h = device.health;
    assert.equal(h.warning.code, 'NINES_ERR_PIPELINE_UNSUPPORTED');
    assert.deepEqual(h.inflight, { max: 4, effective: 1 });
    assert.equal(h.state, 'up');
    assert.ok(log.some((x) => x.warning && x.inflight.effective === 1), 'a health event says it');
    assert.deepEqual(rec.clients.map((c) => c.effectiveInflight), [1, 1]);
    // one request per connection from now on, and nothing lost
    const dropped = sim.stats.busyDropped;
    rec.most.fill(0);
    const before = device.stats;
    const again = [];
    for (let u = 0; u < 8; u++) for (let k = 0; k < 10; k++) again.push(device.user(`p${u}`).request(READ));
    assert.ok(device.stats.inFlight <= 2);
    await Promise.all(again);
    assert.deepEqual(rec.most, [1, 1]);
    assert.equal(device.stats.ok - before.ok, 80);
    assert.equal(sim.stats.busyDropped, dropped);
  });

  it('keeps the one-request path for a device without pipelining: no maxInflight for its clients', async function () {
    const { device, rec } = await t.open(await startModbus(), { maxConnections: 2 });
    await Promise.all(Array.from({ length: 20 }, () => device.request(READ)));
    for (const o of rec.opts) assert.equal(o.maxInflight, undefined);
    assert.deepEqual(rec.most, [1, 1]);
    assert.deepEqual(device.health.inflight, { max: 1, effective: 1 });
  });
});
