'use strict';

/**
 * FC8 counters in a device's health (spec.diagnosticsMs, devices/diagnostics.js): read per unit at
 * the period, with their growth since the read before; at low priority (a round waits while others'
 * requests are queued); a unit that lacks FC8 shown once and not asked again; checked at the edge.
 */

const assert = require('node:assert/strict');
const { Device, buildDeviceSpec } = require('../../gateway/devices');
const { createModbusTcpSimulator, createModbusRtuTcpSimulator, createModbusLineModel } = require('../../gateway/simulators/modbus');
const { READ } = require('./helpers');
const { until } = require('../helpers/wait');

const PERIOD_MS = 1000;

describe('Device: FC8 diagnostics counters in the health', function () {
  this.timeout(20000);
  const cleanup = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c.close();
  });

  const diag = (device) => device.health.diagnostics;

  it('reads the counters at the period and shows how much each grew since the read before', async () => {
    const sim = await createModbusTcpSimulator({ port: 0 });
    cleanup.push(sim);
    const device = new Device({ name: 'plc', target: sim.url, diagnosticsMs: '1s' });
    cleanup.push(device);
    await device.open();
    assert.deepEqual(diag(device), { periodMs: PERIOD_MS, units: [{ unitId: 1, at: null, counters: null, deltas: null, rounds: 0, deferred: 0, lastError: null }] });
    await until(() => diag(device).units[0].rounds === 1, 'a first round', 3000);
    const first = diag(device).units[0];
    assert.equal(first.deltas, null, 'nothing to compare the first read with');
    assert.deepEqual(Object.keys(first.counters), ['busMessages', 'busCommunicationErrors', 'busExceptions', 'serverMessages', 'serverNoResponses', 'serverNaks', 'serverBusy', 'characterOverruns']);
    // the simulator counts what it was sent: the counter requests are messages too
    assert.ok(first.counters.busMessages >= 1, JSON.stringify(first.counters));
    for (let i = 0; i < 5; i++) await device.request(READ);
    await until(() => diag(device).units[0].rounds === 2, 'a second round', 3000);
    const second = diag(device).units[0];
    // five reads and the eight counter requests of the round before (the counter read's own request
    // is counted after the model answers it, so the 8 of this round are partly in)
    assert.ok(second.deltas.busMessages >= 5 + 8, JSON.stringify(second.deltas));
    assert.equal(second.deltas.busCommunicationErrors, 0);
    assert.equal(second.counters.busMessages - first.counters.busMessages, second.deltas.busMessages);
    assert.equal(device.stats.users['nines:diagnostics'].requests, 16);
  });

  it('shows a unit that lacks FC8 once, and asks it no more; its neighbours go on', async () => {
    const model = createModbusLineModel({ units: { 2: {}, 3: { lacks: [8] } } });
    const sim = await createModbusRtuTcpSimulator({ port: 0, model });
    cleanup.push(sim);
    const device = new Device({ name: 'line', target: sim.url, units: [{ name: 'a', unitId: 2 }, { name: 'b', unitId: 3 }], diagnosticsMs: PERIOD_MS });
    cleanup.push(device);
    const events = [];
    device.on('health', (h) => events.push(h.diagnostics));
    await device.open();
    await until(() => diag(device).units[0].rounds === 2, 'two rounds', 4000);
    const [a, b] = diag(device).units;
    assert.deepEqual([a.unit, a.unitId, a.lastError], ['a', 2, null]);
    assert.deepEqual([b.unit, b.unitId, b.unsupported, b.lastError.code, b.counters], ['b', 3, true, 'NINES_ERR_FC_UNSUPPORTED', null]);
    // unit 3 was asked once: one request of the first round (it answered exception 1), none after
    assert.equal(device.stats.users['nines:diagnostics'].requests, 8 + 1 + 8);
    assert.ok(events.length >= 2, 'each round is a health event');
  });

  it('waits while other requests are queued, and leaves a round it could not finish to the next', async () => {
    const sim = await createModbusTcpSimulator({ port: 0, faults: 'latency=15ms' });
    cleanup.push(sim);
    const device = new Device({ name: 'busy', target: sim.url, diagnosticsMs: PERIOD_MS });
    cleanup.push(device);
    await device.open();
    // three requests always waiting, for a little more than the first round's whole period
    const floodEnd = performance.now() + 2 * PERIOD_MS + 200;
    const flood = async () => { while (performance.now() < floodEnd) await device.user('poll').request(READ); };
    await Promise.all([flood(), flood(), flood(), flood()]);
    const u = diag(device).units[0];
    assert.ok(u.deferred >= 1, JSON.stringify(u));
    assert.equal(u.rounds, 0, 'no counter was read while the queue held requests');
    await until(() => diag(device).units[0].rounds === 1, 'a round once the queue is empty', 3000);
  });

  it('is checked at the edge: a period from 1s to 24h, on Modbus devices only; none by default', () => {
    const spec = (extra) => buildDeviceSpec({ name: 'd', target: 'modbus+tcp://127.0.0.1:502', ...extra });
    assert.equal(spec({}).diagnosticsMs, 0);
    assert.equal(spec({ diagnosticsMs: '1min' }).diagnosticsMs, 60000);
    assert.throws(() => spec({ diagnosticsMs: '500ms' }), { code: 'NINES_ERR_INVALID_ARG', message: /diagnosticsMs must be a whole number of ms from 1s to 24h/ });
    assert.throws(() => spec({ diagnosticsMs: 'often' }), { code: 'NINES_ERR_INVALID_ARG', message: /diagnosticsMs is not a duration/ });
    assert.throws(() => buildDeviceSpec({ name: 'd', target: 'ascii://127.0.0.1:9500', diagnosticsMs: 1000 }), { code: 'NINES_ERR_INVALID_ARG', message: /applies to Modbus devices only/ });
    assert.equal(new Device(spec({})).health.diagnostics, undefined, 'no diagnostics, no key in the health');
  });
});
