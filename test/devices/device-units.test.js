'use strict';

/**
 * A line of units at the device (unit-health.js, Device#_lineTimedOut), with a scripted client: what the
 * device hands its client after a request times out on a serial line.
 */

const assert = require('node:assert/strict');
const { EventEmitter } = require('node:events');
const { Device } = require('../../gateway/devices');
const { NinesError } = require('../../gateway/base/errors');
const { until } = require('../helpers/wait');

/** A client whose requests settle when the test says so; records when and how each was handed over. */
function scriptedClient () {
  const c = new EventEmitter();
  c.state = 'disconnected';
  c.handed = [];
  c.connect = () => { c.state = 'connected'; c.emit('connect'); return Promise.resolve(); };
  c.close = () => { c.state = 'closed'; return Promise.resolve(); };
  c.request = (op, opts) => new Promise((resolve, reject) => {
    c.handed.push({ op, timeoutMs: opts.timeoutMs, at: performance.now(), resolve, reject });
  });
  return c;
}

const read = (unitId) => ({ fc: 3, address: 0, quantity: 1, unitId });
const wireTimeout = (timeoutMs) => new NinesError('NINES_ERR_REPLY_TIMEOUT', `no reply within ${timeoutMs} ms`, { timeoutMs });

describe('Device: a line of units on a serial line', function () {
  let device;
  afterEach(async () => {
    if (device) await device.close();
    device = undefined;
  });

  it('after a timeout on the wire, holds the next request until the line is quiet, then hands it over with its whole timeout', async function () {
    const client = scriptedClient();
    device = new Device({ name: 'bus', target: 'modbus+rtutcp://127.0.0.1:5020', timeoutMs: 100, units: [{ name: 'm1', unitId: 1 }, { name: 'm2', unitId: 2 }] },
      { createClient: () => client });
    await device.open();
    const silent = device.user('m1').request(read(1)).catch((err) => err);
    const neighbour = device.user('m2').request(read(2));
    assert.equal(client.handed.length, 1, 'one request at a time on the line');
    const timedOutAt = performance.now();
    client.handed[0].reject(wireTimeout(100));
    assert.equal((await silent).code, 'NINES_ERR_REPLY_TIMEOUT');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(client.handed.length, 1, 'nothing goes to the driver while it keeps the line quiet');
    await until(() => client.handed.length === 2, 'the neighbour handed over', 1000);
    const handed = client.handed[1];
    assert.ok(handed.at - timedOutAt >= 99, `handed over ${handed.at - timedOutAt} ms after the timeout`);
    assert.equal(handed.timeoutMs, 100, 'with its whole timeout');
    handed.resolve({ data: [1] });
    assert.deepEqual((await neighbour).data, [1]);
  });
});
