'use strict';

/**
 * A request's latest start (opts.notAfter, a write command's maximum age, issue 18): checked when the
 * request would be handed to a connection, so a request that waited past it fails unsent with
 * NINES_ERR_WRITE_EXPIRED, and one handed over in time keeps its whole timeout on the wire.
 */

const assert = require('node:assert/strict');
const { READ, startModbus, rejectionOf, deviceFixture } = require('./helpers');

/** @param {number} ms from now @returns {number} epoch ms as the device counts notAfter */
const inMs = (ms) => performance.timeOrigin + performance.now() + ms;

describe('Device: a request\'s latest start (notAfter)', function () {
  const t = deviceFixture();

  it('fails a request that waited past its latest start, unsent, and sends one that started in time', async function () {
    const { sim, device } = await t.open(await startModbus(), { timeoutMs: 2000 });
    await device.request(READ);
    const before = sim.stats.requests;
    sim.faults.stall(400);
    // holds the one connection for about 400 ms
    const wire = device.request(READ);
    const late = rejectionOf(device.user('writes').request({ fc: 6, address: 5, value: 1 }, { notAfter: inMs(100) }));
    const inTime = device.user('writes').request({ fc: 6, address: 6, value: 2 }, { notAfter: inMs(5000) });
    const err = await late;
    assert.equal(err.code, 'NINES_ERR_WRITE_EXPIRED');
    assert.equal(err.details.queued, true, 'never sent');
    await wire;
    await inTime;
    assert.equal(sim.model.banks.holdingRegisters[5], 0, 'the expired write never reached the device');
    assert.equal(sim.model.banks.holdingRegisters[6], 2);
    assert.equal(sim.stats.requests - before, 2, 'the stalled read and the write in time, nothing else');
    assert.equal(device.stats.users.writes.errors, 1);
  });

  it('refuses at once a request whose latest start has passed', async function () {
    const { sim, device } = await t.open(await startModbus(), { timeoutMs: 1000 });
    await device.request(READ);
    const before = sim.stats.requests;
    const err = await rejectionOf(device.request({ fc: 6, address: 5, value: 1 }, { notAfter: inMs(-1) }));
    assert.equal(err.code, 'NINES_ERR_WRITE_EXPIRED');
    assert.equal(sim.stats.requests, before);
  });

  it('gives a request that started in time its whole timeout, not what was left of its latest start', async function () {
    const { sim, device } = await t.open(await startModbus(), { timeoutMs: 1000 });
    await device.request(READ);
    // every reply takes 150 ms: the queued read is handed over after ~150 ms, with about 150 ms of
    // its latest start to spare, and answered 150 ms later: after that latest start, within its timeout
    sim.faults.set('latency=150ms');
    const wire = device.request(READ);
    const queued = device.request(READ, { notAfter: inMs(300) });
    await wire;
    assert.ok(await queued);
  });
});
