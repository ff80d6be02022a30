'use strict';

// How `nines scan` maps a table (gateway/commission/map-probe.js), against the simulator's model
// directly: exact on the maps it promises to find exactly, within its request counts, bounded by
// its budget. Pure: no sockets.

const assert = require('node:assert/strict');
const { mapTable } = require('../../gateway/commission/map-probe');
const { createModbusModel } = require('../../gateway/simulators/modbus/model');
const { encodeRequestPdu, decodeResponsePdu } = require('../../gateway/drivers/modbus/pdu');
const { validateOp } = require('../../gateway/drivers/modbus/op');
const D = require('../../gateway/commission/defaults');
const { prng, randomRuns } = require('./maps');

const TABLES = [['coils', 1, 2000], ['discreteInputs', 2, 2000], ['inputRegisters', 4, 125], ['holdingRegisters', 3, 125]];

/** A read of one table of a model, as the scan's client makes it. */
const reader = (model, fc) => async (address, quantity) => {
  const op = validateOp({ fc, address, quantity });
  decodeResponsePdu(model.handle(1, encodeRequestPdu(op)), op, 1);
};

describe('scan: mapping a table', () => {
  it('finds every run exactly on 40 random sparse maps of all four tables, within its budget', async () => {
    const random = prng(23);
    let most = 0;
    for (let i = 0; i < 40; i++) {
      const map = {};
      for (const [bank] of TABLES) map[bank] = randomRuns(random, D.SCAN_LAST_ADDRESS);
      const model = createModbusModel({ map });
      let requests = 0;
      for (const [bank, fc, max] of TABLES) {
        const m = await mapTable(reader(model, fc), { first: 0, last: D.SCAN_LAST_ADDRESS, maxPerRequest: max, steps: D.SCAN_STEPS, budget: 1e6 });
        assert.deepEqual(m.ranges, map[bank], `map ${i} ${bank}: ${JSON.stringify(map[bank])}`);
        assert.equal(m.complete, true);
        requests += m.requests;
      }
      most = Math.max(most, requests);
    }
    assert.ok(most <= D.SCAN_REQUESTS_PER_UNIT, `a unit took ${most} requests; the default budget is ${D.SCAN_REQUESTS_PER_UNIT}`);
  });

  it('crosses an empty table in about one request per 100 addresses, and reads a full one in requests as large as allowed', async () => {
    const empty = createModbusModel({ map: {} });
    const e = await mapTable(reader(empty, 3), { first: 0, last: 9999, maxPerRequest: 125, steps: D.SCAN_STEPS, budget: 1e6 });
    assert.deepEqual(e.ranges, []);
    assert.ok(e.requests <= 106, `${e.requests} requests`);
    assert.deepEqual(e.exceptions, { 2: e.requests });
    const full = createModbusModel();
    const f = await mapTable(reader(full, 3), { first: 0, last: 9999, maxPerRequest: 125, steps: D.SCAN_STEPS, budget: 1e6 });
    assert.deepEqual(f.ranges, [[0, 9999]]);
    assert.equal(f.requests, 1 + Math.ceil(9999 / 125));
  });

  it('misses a short run far from others and off the grid, and finds it probing every address (steps 1)', async () => {
    const model = createModbusModel({ map: { holdingRegisters: [[0, 9], [437, 441]] } });
    const coarse = await mapTable(reader(model, 3), { first: 0, last: 999, maxPerRequest: 125, steps: D.SCAN_STEPS, budget: 1e6 });
    assert.deepEqual(coarse.ranges, [[0, 9]]);
    const fine = await mapTable(reader(model, 3), { first: 0, last: 999, maxPerRequest: 125, steps: [1], budget: 1e6 });
    assert.deepEqual(fine.ranges, [[0, 9], [437, 441]]);
  });

  it('stops at its budget and says where', async () => {
    const model = createModbusModel({ map: { holdingRegisters: [[0, 99], [5000, 5099]] } });
    const m = await mapTable(reader(model, 3), { first: 0, last: 9999, maxPerRequest: 125, steps: D.SCAN_STEPS, budget: 30 });
    assert.equal(m.complete, false);
    assert.equal(m.requests, 30);
    assert.deepEqual(m.ranges, [[0, 99]]);
    assert.ok(m.stoppedAt > 99 && m.stoppedAt < 5000, `stopped at ${m.stoppedAt}`);
  });

  it('ends a table on a failure that is not an exception 1-3', async () => {
    const read = async (address) => {
      if (address >= 300) throw Object.assign(new Error('timeout'), { code: 'NINES_ERR_REPLY_TIMEOUT' });
    };
    const m = await mapTable(read, { first: 0, last: 999, maxPerRequest: 125, steps: D.SCAN_STEPS, budget: 100 });
    assert.equal(m.complete, false);
    assert.equal(m.error, 'NINES_ERR_REPLY_TIMEOUT');
  });
});
