'use strict';

const assert = require('node:assert/strict');
const { DeviceUser } = require('../../gateway/devices');
const { NinesError } = require('../../gateway/base/errors');
const { startSchedule } = require('../../gateway/scheduler');
const { Recorder } = require('../../gateway/latency');
const { READ, startModbus, startAscii, rejectionOf, healthLog, sendOrder, deviceFixture } = require('./helpers');
const { until } = require('../helpers/wait');

describe('Device: connections and requests', function () {
  const t = deviceFixture();

  it('makes exactly one connection for ten users on maxConnections 1 and gives each its fair share', async function () {
    const { sim, device, rec } = await t.open(await startModbus(), { maxConnections: 1 });
    const done = [];
    const all = [];
    for (let u = 0; u < 10; u++) {
      const user = device.user(`job${u}`);
      for (let k = 0; k < 20; k++) all.push(user.request(READ).then((r) => done.push({ user: user.name, sentNs: r.sentNs })));
    }
    await Promise.all(all);
    assert.equal(rec.clients.length, 1);
    assert.equal(sim.stats.connections, 1, 'one socket accepted by the device');
    assert.equal(rec.busyHandOvers, 0, 'a request is handed only to a free client');
    const order = sendOrder(done);
    // Strict turns: every run of ten consecutive sends has each user once
    for (let i = 0; i < order.length; i += 10) assert.equal(new Set(order.slice(i, i + 10)).size, 10, `sends ${i}-${i + 9}: ${order.slice(i, i + 10)}`);
    const stats = device.stats;
    assert.equal(stats.ok, 200);
    for (let u = 0; u < 10; u++) assert.deepEqual(stats.users[`job${u}`], { requests: 20, ok: 20, errors: 0, timeouts: 0, dropped: 0, skipped: 0, queued: 0, inFlight: 0 });
  });

  it('never opens more than maxConnections sockets, however many users ask at once', async function () {
    const { sim, device, rec } = await t.open(await startModbus({ faults: 'latency=2ms' }), { maxConnections: 3 });
    const all = [];
    for (let u = 0; u < 10; u++) for (let k = 0; k < 10; k++) all.push(device.user(`u${u}`).request(READ));
    assert.equal(device.stats.inFlight, 3, 'one request per connection');
    await Promise.all(all);
    assert.equal(rec.clients.length, 3);
    assert.equal(sim.stats.connections, 3);
    assert.equal(device.health.connections.open, 3);
    assert.equal(rec.busyHandOvers, 0);
    for (const o of rec.opts) assert.deepEqual(Object.keys(o).sort(), ['backoff', 'connectTimeoutMs', 'queueMax', 'reconnect', 'timeoutMs']);
  });

  it('passes replies and driver errors through unchanged, with sentNs and doneNs', async function () {
    const { device } = await t.open(await startModbus());
    const reply = await device.request(READ);
    assert.equal(typeof reply.sentNs, 'bigint');
    assert.equal(typeof reply.doneNs, 'bigint');
    assert.ok(reply.doneNs >= reply.sentNs);
    assert.deepEqual([...reply.data], [0, 0]);
    const err = await rejectionOf(device.request({ fc: 3, address: 9999, quantity: 2 }));
    assert.ok(err instanceof NinesError);
    assert.equal(err.code, 'NINES_ERR_MODBUS_EXCEPTION');
    assert.equal(typeof err.sentNs, 'bigint', 'the scheduler records the send of a failed request');
    const bad = await rejectionOf(device.request({ fc: 99 }));
    assert.equal(bad.code, 'NINES_ERR_INVALID_OP');
    // the connection is free again after each of them
    assert.ok((await device.request(READ)).sentNs > reply.sentNs);
    assert.deepEqual({ ...device.stats, users: undefined }, { requests: 4, ok: 2, errors: 2, timeouts: 0, dropped: 0, skipped: 0, queued: 0, inFlight: 0, users: undefined });
  });

  it('returns the same user for the same name; request() is the user "default"', async function () {
    const { device } = await t.open(await startModbus(), {}, { open: false });
    const a = device.user('job-a', { queueMax: 5 });
    assert.ok(a instanceof DeviceUser);
    assert.equal(device.user('job-a'), a);
    assert.equal(a.queueMax, 5);
    assert.equal(device.user('job-b').queueMax, 64);
    // request() before open() opens the device
    await device.request(READ);
    assert.equal(device.stats.users.default.ok, 1);
    assert.throws(() => device.user(''), { code: 'NINES_ERR_INVALID_ARG' });
    assert.throws(() => device.user('x', { queueMax: 0 }), { code: 'NINES_ERR_INVALID_ARG' });
    await assert.rejects(a.request(READ, { timeoutMs: 0 }), { code: 'NINES_ERR_INVALID_ARG' });
  });

  it('takes a request\'s own timeout in the forms its driver takes ("500ms" too), and refuses one with the device\'s timeout rule', async function () {
    const { device, rec } = await t.open(await startModbus(), {}, { open: false });
    const user = device.user('own-timeout');
    await user.request(READ); // connected: the next are handed over at once, with their whole timeout
    await user.request(READ, { timeoutMs: '750ms' });
    const submitted = await new Promise((resolve, reject) => user.submit(READ, '1.5s', { onReply: () => resolve(true), onError: reject }));
    assert.equal(submitted, true);
    // the driver was handed the timeout read, in ms, not the text
    assert.deepEqual(rec.calls.slice(-2).map((c) => c.timeoutMs), [750, 1500]);
    const { buildDeviceSpec } = require('../../gateway/devices/spec');
    const specRule = (v) => { try { buildDeviceSpec({ name: 'd', target: 'modbus+tcp://127.0.0.1:1', timeoutMs: v }); } catch (err) { return err.details.rule; } };
    for (const v of ['0.5ms', '2h', 'soon', 0]) {
      const err = await rejectionOf(user.request(READ, { timeoutMs: v }));
      assert.deepEqual([err.code, err.details.field, err.details.value, err.details.rule], ['NINES_ERR_INVALID_ARG', 'timeoutMs', v, specRule(v)], String(v));
      const viaSubmit = await new Promise((resolve) => user.submit(READ, v, { onReply: () => resolve(null), onError: resolve }));
      assert.equal(viaSubmit.details.rule, err.details.rule);
    }
    assert.equal(device.stats.users['own-timeout'].errors, 8, 'each refusal counted as an error of its user');
  });

  it('rejects at once with NINES_ERR_QUEUE_FULL when a user\'s queue is full, counting it as dropped for that user only', async function () {
    const { device } = await t.open(await startModbus({ faults: 'latency=200ms' }));
    const flood = device.user('flood', { queueMax: 2 });
    const calm = device.user('calm');
    const sent = [flood.request(READ), flood.request(READ), flood.request(READ)]; // one on the wire, two waiting
    const err = await rejectionOf(flood.request(READ));
    assert.equal(err.code, 'NINES_ERR_QUEUE_FULL');
    assert.equal(err.details.user, 'flood');
    const other = calm.request(READ); // another user's queue is its own
    await Promise.all([...sent, other]);
    assert.equal(device.stats.users.flood.dropped, 1);
    assert.equal(device.stats.users.flood.ok, 3);
    assert.equal(device.stats.users.calm.dropped, 0);
    assert.equal(device.stats.dropped, 1);
  });

  it('shares an ASCII device\'s connections among users the same way', async function () {
    const { sim, device, rec } = await t.open(await startAscii(), { name: 'ed588', maxConnections: 2 });
    const all = [];
    for (let u = 0; u < 4; u++) for (let k = 0; k < 10; k++) all.push(device.user(`n${u}`).request('@01'));
    const replies = await Promise.all(all);
    assert.ok(replies.every((r) => typeof r.sentNs === 'bigint'));
    assert.equal(sim.stats.connections, 2);
    assert.equal(rec.busyHandOvers, 0);
    assert.equal(device.stats.ok, 40);
  });

  it('drives the scheduler: two jobs, each a DeviceUser as its clients, share two connections', async function () {
    const { sim, device } = await t.open(await startModbus(), { maxConnections: 2 });
    const runs = ['job-a', 'job-b'].map((name) => {
      const user = device.user(name);
      const recorder = new Recorder({ policy: 'closed' });
      // Two lanes each: the device, not the job, decides which connection carries a request
      return { recorder, run: startSchedule({ clients: [user, user], nextOp: () => READ, count: 200, recorder }) };
    });
    for (const { run, recorder } of runs) {
      assert.equal((await run.done).sent, 200);
      assert.equal(recorder.totals().ok, 200);
    }
    assert.equal(sim.stats.connections, 2);
    assert.equal(device.stats.ok, 400);
  });

  describe('close', function () {
    it('rejects queued requests with NINES_ERR_CLOSED, ends those in flight and closes every socket', async function () {
      const { sim, device } = await t.open(await startModbus({ faults: 'latency=500ms' }), { maxConnections: 2, timeoutMs: 10000 }, { open: false });
      const log = healthLog(device);
      await device.open();
      const pending = Array.from({ length: 6 }, () => rejectionOf(device.request(READ)));
      assert.equal(device.stats.queued, 4);
      const closing = device.close();
      assert.equal(device.close(), closing, 'idempotent');
      const errs = await Promise.all(pending);
      for (const e of errs) assert.equal(e.code, 'NINES_ERR_CLOSED');
      assert.equal(errs.filter((e) => e.details && e.details.queued).length, 4);
      await closing;
      assert.equal(device.health.state, 'closed');
      assert.equal(log[log.length - 1].state, 'closed');
      await assert.rejects(device.request(READ), { code: 'NINES_ERR_CLOSED' });
      await assert.rejects(device.open(), { code: 'NINES_ERR_CLOSED' });
      await until(() => sim.stats.open === 0, 'the simulator to see both sockets closed');
      assert.equal(device.stats.errors, 7);
    });

    it('a closed user\'s waiting requests reject with NINES_ERR_CLOSED; the other users go on', async function () {
      const { device } = await t.open(await startModbus({ faults: 'latency=50ms' }), { timeoutMs: 10000 });
      const gone = device.user('gone');
      const stay = device.user('stay');
      const first = gone.request(READ); // on the wire: it completes
      const queued = [rejectionOf(gone.request(READ)), rejectionOf(gone.request(READ))];
      const others = [stay.request(READ), stay.request(READ)];
      gone.close();
      gone.close();
      assert.equal(gone.closed, true);
      for (const e of await Promise.all(queued)) {
        assert.equal(e.code, 'NINES_ERR_CLOSED');
        assert.equal(e.details.user, 'gone');
      }
      await first;
      await Promise.all(others);
      await assert.rejects(gone.request(READ), { code: 'NINES_ERR_CLOSED' });
      assert.equal(device.stats.users.gone, undefined, 'the device forgot the user');
      assert.notEqual(device.user('gone'), gone, 'the name can be used again');
      assert.equal(device.stats.users.stay.ok, 2);
    });
  });
});
