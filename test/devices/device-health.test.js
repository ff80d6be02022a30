'use strict';

const assert = require('node:assert/strict');
const { Device } = require('../../gateway/devices');
const { READ, startModbus, freePort, rejectionOf, healthLog } = require('./helpers');
const { until } = require('../helpers/wait');

const BACKOFF = { initialMs: 20, maxMs: 100 };

/** Settles to 'late' unless p rejects before the event loop turns: "at once" without a clock. */
function atOnce (p) {
  return Promise.race([p.then(() => 'resolved', (err) => err), new Promise((resolve) => setImmediate(() => resolve('late')))]);
}

/** Resolves with the next 'health' event whose state is `state`. */
function nextHealth (device, state) {
  return new Promise((resolve) => {
    const on = (h) => { if (h.state === state) { device.removeListener('health', on); resolve(h); } };
    device.on('health', on);
  });
}

/** Consecutive duplicates removed: the story of the states. */
const story = (log) => log.map((h) => h.state).filter((s, i, a) => i === 0 || a[i - 1] !== s);

describe('Device: health', function () {
  const cleanup = [];

  afterEach(async function () {
    for (const c of cleanup.splice(0).reverse()) await c.close();
  });

  it('is connecting until the first connection is up, then up, with each connection counted as it comes', async function () {
    const sim = await startModbus();
    cleanup.push(sim);
    let t = 1000;
    const device = new Device({ name: 'plc', target: sim.url, maxConnections: 3 }, { now: () => t++ });
    cleanup.push(device);
    const log = healthLog(device);
    assert.deepEqual(device.health, { device: 'plc', state: 'connecting', since: 1000, lastError: null, connections: { open: 0, max: 3 },
      inflight: { max: 1, effective: 1 }, warning: null });
    await device.open();
    await device.open(); // idempotent
    await until(() => sim.stats.connections === 3, 'the simulator to accept three connections');
    // one state change; then each connection that comes up updates connections.open
    assert.deepEqual([...new Set(story(log))], ['up']);
    assert.deepEqual(log.map((h) => h.connections.open), [1, 2, 3]);
    assert.equal(device.health.state, 'up');
    assert.equal(device.health.connections.open, 3);
    assert.ok(device.health.since > 1000);
  });

  it('is down when every first attempt fails, rejects at once, and is up as soon as the device appears', async function () {
    const port = await freePort();
    const device = new Device({ name: 'plc', target: `modbus+tcp://127.0.0.1:${port}`, maxConnections: 2, timeoutMs: 10000, backoff: BACKOFF });
    cleanup.push(device);
    const log = healthLog(device);
    await device.open(); // a device down at start is fine
    const h = device.health;
    assert.equal(h.state, 'down');
    assert.equal(h.lastError.code, 'NINES_ERR_CONNECT_FAILED');
    assert.equal(h.connections.open, 0);
    assert.deepEqual(story(log), ['down']);
    const err = await atOnce(device.request(READ));
    assert.equal(err.code, 'NINES_ERR_NOT_CONNECTED');
    assert.deepEqual({ ...err.details, target: undefined, queued: undefined },
      { device: 'plc', state: 'down', since: h.since, cause: 'NINES_ERR_CONNECT_FAILED', target: undefined, queued: undefined });
    assert.equal(device.stats.errors, 1);

    const up = nextHealth(device, 'up');
    const sim = await startModbus({ port });
    cleanup.unshift(sim);
    assert.equal((await up).state, 'up', 'the clients reconnect by themselves');
    assert.equal(sim.stats.requests, 0, 'nothing asked while down is replayed');
    assert.equal(typeof (await device.request(READ)).sentNs, 'bigint');
  });

  it('goes down when the device is killed and up when it restarts, failing the backlog at once instead of replaying it', async function () {
    let sim = await startModbus({ faults: 'latency=300ms' });
    const port = sim.port;
    const device = new Device({ name: 'plc', target: sim.url, timeoutMs: 10000, backoff: BACKOFF });
    cleanup.push(device);
    const log = healthLog(device);
    await device.open();
    const wire = rejectionOf(device.request(READ));
    const waiting = [1, 2, 3].map(() => rejectionOf(device.user('job').request(READ)));
    const down = nextHealth(device, 'down');
    await sim.close();
    const h = await down;
    assert.equal(h.lastError.code, 'NINES_ERR_CONNECTION_CLOSED');
    assert.equal((await wire).code, 'NINES_ERR_CONNECTION_CLOSED');
    for (const e of await Promise.all(waiting)) {
      assert.equal(e.code, 'NINES_ERR_NOT_CONNECTED');
      assert.equal(e.details.queued, true);
    }
    // While down: rejected at once, and the reconnect failures show as a new lastError
    for (let i = 0; i < 5; i++) assert.equal((await atOnce(device.request(READ))).code, 'NINES_ERR_NOT_CONNECTED');
    await until(() => log.some((x) => x.state === 'down' && x.lastError.code === 'NINES_ERR_CONNECT_FAILED'), 'a health event with the connect failure');
    assert.equal(device.stats.queued, 0, 'no backlog');

    const up = nextHealth(device, 'up');
    sim = await startModbus({ port });
    cleanup.unshift(sim);
    await up;
    assert.deepEqual(story(log), ['up', 'down', 'up']);
    await device.request(READ);
    assert.equal(sim.stats.requests, 1, 'the restarted device sees only the request made after it came back');
    assert.ok(log[log.length - 1].since >= h.since);
  });

  it('keeps devices apart: a dead one fails its own requests and costs the others nothing', async function () {
    const sim = await startModbus();
    cleanup.push(sim);
    const dead = new Device({ name: 'dead', target: `modbus+tcp://127.0.0.1:${await freePort()}`, backoff: BACKOFF });
    const live = new Device({ name: 'live', target: sim.url });
    cleanup.push(dead, live);
    const liveLog = healthLog(live);
    await Promise.all([dead.open(), live.open()]);
    const loop = async () => { for (let i = 0; i < 100; i++) await live.request(READ); };
    const deadErrs = Promise.all(Array.from({ length: 100 }, () => rejectionOf(dead.request(READ))));
    await Promise.all([loop(), loop()]);
    assert.ok((await deadErrs).every((e) => e.code === 'NINES_ERR_NOT_CONNECTED'));
    await dead.close();
    await live.request(READ);
    assert.equal(live.stats.errors + live.stats.timeouts, 0);
    assert.equal(live.stats.ok, 201);
    assert.deepEqual(story(liveLog), ['up']);
    assert.equal(dead.health.state, 'closed');
  });

  it('needs no listener: a failing device reports through health, never by throwing or an error event', async function () {
    const device = new Device({ name: 'quiet', target: `modbus+tcp://127.0.0.1:${await freePort()}`, backoff: BACKOFF });
    cleanup.push(device);
    await device.open();
    await new Promise((resolve) => setTimeout(resolve, 150)); // a few reconnect failures, unheard
    assert.equal(device.health.state, 'down');
    assert.equal(device.listenerCount('error'), 0);
  });
});
