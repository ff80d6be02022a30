'use strict';

/**
 * A write whose outcome is unknown is never reported as not written (issue 18): a request that went
 * out and then timed out, lost its connection, or lost its device to a live reload may have been
 * executed. Real gateway, real simulator: the timeout case shows the device did execute it.
 */

const assert = require('node:assert/strict');
const { validateConfig } = require('../../gateway/runtime/config');
const { Gateway } = require('../../gateway/runtime/gateway');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');

const TAGS = { io: [{ name: 'setpoint', table: 'holding', address: 10, type: 'int16' }] };

function config (plc, other, { withPlc = true, timeout = '1s' } = {}) {
  return validateConfig({
    gateway: { id: 'wo', workers: 1 },
    mqtt: { embedded: { port: 0 } },
    devices: {
      ...(withPlc ? { plc: { target: plc.url, allowWrites: true, timeout, tags: TAGS } } : {}),
      other: { target: other.url, tags: TAGS }
    },
    jobs: [{ name: 'poll', device: 'other', tags: 'io', rate: '2/s' }]
  }, { env: {} });
}

/** Resolves once the register holds value, or after ms (bounded) */
async function registerBecomes (sim, value, ms) {
  const until = Date.now() + ms;
  while (sim.model.banks.holdingRegisters[10] !== value && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
  return sim.model.banks.holdingRegisters[10];
}

describe('writes by tag: an unknown outcome is reported as unknown, not as not written', function () {
  this.timeout(20000);
  let plc, other, gw;
  beforeEach(async () => {
    plc = await createModbusTcpSimulator({ port: 0 });
    other = await createModbusTcpSimulator({ port: 0 });
  });
  afterEach(async () => {
    if (gw) await gw.stop();
    await plc.close();
    await other.close();
    gw = null;
  });

  async function start (opts) {
    gw = new Gateway(config(plc, other, opts));
    await gw.start();
    // connected and answering before the fault is set
    const first = await gw.writeTags('plc', { setpoint: 1 });
    assert.equal(first.ok, true);
  }

  it('a write that timed out after it was sent: unknown, and the device did execute it', async () => {
    await start({ timeout: '100ms' });
    plc.faults.set('latency=400ms');
    const out = await gw.writeTags('plc', { setpoint: 42 });
    assert.equal(out.ok, false);
    assert.equal(out.results.setpoint.written, 'unknown');
    assert.equal(out.results.setpoint.code, 'NINES_ERR_WRITE_UNKNOWN');
    assert.equal(out.results.setpoint.cause.code, 'NINES_ERR_REPLY_TIMEOUT');
    // the reply was late, not missing: the device holds the value that "failed"
    assert.equal(await registerBecomes(plc, 42, 3000), 42);
  });

  it('a write whose connection dropped after it went out: unknown', async () => {
    await start();
    plc.faults.set('close=1');
    const out = await gw.writeTags('plc', { setpoint: 43 });
    assert.equal(out.results.setpoint.written, 'unknown');
    assert.equal(out.results.setpoint.code, 'NINES_ERR_WRITE_UNKNOWN');
    assert.equal(out.results.setpoint.cause.code, 'NINES_ERR_CONNECTION_CLOSED');
  });

  it('a write in flight when a live reload removes its device: unknown, not NINES_ERR_CLOSED', async () => {
    await start();
    plc.faults.set('latency=1s');
    const pending = gw.writeTags('plc', { setpoint: 44 });
    // the request is on the wire once the simulator has it
    const until = Date.now() + 3000;
    const before = plc.stats.requests;
    while (plc.stats.requests === before && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.ok(plc.stats.requests > before, 'the write reached the simulator');
    await gw.reload(config(plc, other, { withPlc: false }));
    const out = await pending;
    assert.equal(out.results.setpoint.written, 'unknown');
    assert.equal(out.results.setpoint.code, 'NINES_ERR_WRITE_UNKNOWN');
    assert.equal(out.results.setpoint.cause.code, 'NINES_ERR_CLOSED');
  });

  it('a write that never reached the wire (device down) stays "not written"', async () => {
    await start();
    await plc.close();
    // the device notices at once (the connection closes) and refuses what comes after
    const until = Date.now() + 5000;
    let out;
    do {
      out = await gw.writeTags('plc', { setpoint: 45 });
      if (out.results.setpoint.code === 'NINES_ERR_NOT_CONNECTED') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    } while (Date.now() < until);
    assert.equal(out.results.setpoint.code, 'NINES_ERR_NOT_CONNECTED');
    assert.equal(out.results.setpoint.written, false);
    plc = await createModbusTcpSimulator({ port: 0 }); // for afterEach
  });
});
