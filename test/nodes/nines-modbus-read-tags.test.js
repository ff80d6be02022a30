'use strict';

/**
 * nines-modbus-read with a tag list: one poll of the tags per msg, the fewest reads that cover
 * them, decoded beside the device; a tag the device refuses arrives with its code in msg.quality
 * and Catch nodes hear of it; a bad list is refused with the field, and nothing is sent.
 */

const assert = require('node:assert/strict');
const { helper, roundTrip, expectError, waitStatus, withModbusSim } = require('./harness');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { encodeValues } = require('../../gateway/values/registers');
const deviceNode = require('../../nodes/nines-modbus-device');
const readNode = require('../../nodes/nines-modbus-read');

const TAGS = [
  { name: 'flow_rate', table: 'input', address: 10, type: 'float32', unit: 'm³/h' },
  { name: 'setpoint', table: 'holding', address: 20, type: 'uint32', order: 'CDAB', scale: 0.01, unit: 'bar' },
  { name: 'running', table: 'discrete', address: 4 },
  { name: 'serial', table: 'holding', address: 24, type: 'string', length: 2 }
];

function flow (port, read = {}) {
  return [
    { id: 'dev', type: 'nines-modbus-device', transport: 'tcp', host: '127.0.0.1', port, unitId: 1, timeout: 300 },
    { id: 'r', type: 'nines-modbus-read', device: 'dev', source: 'tags', tags: TAGS, wires: [['out']], ...read },
    { id: 'out', type: 'helper' },
    { id: 'c', type: 'catch', scope: ['r'], wires: [['caught']] },
    { id: 'caught', type: 'helper' }
  ];
}

describe('nines-modbus-read with a tag list', function () {
  let sim;
  withModbusSim(() => sim, (s) => { sim = s; });

  /** Sends a msg; resolves with what reaches the output and what reaches the Catch node. */
  function outAndCaught (msg) {
    const out = new Promise((resolve) => helper.getNode('out').once('input', resolve));
    const caught = new Promise((resolve) => helper.getNode('caught').once('input', resolve));
    helper.getNode('r').receive(msg);
    return Promise.all([out, caught]);
  }

  it('reads the tags of a msg in one coalesced poll, decoded and named, with quality and units', async () => {
    const { inputRegisters: ir, holdingRegisters: hr, discreteInputs } = sim.model.banks;
    [ir[10], ir[11]] = encodeValues(12.5, { type: 'float32' });
    [hr[20], hr[21]] = encodeValues(250000, { type: 'uint32', wordOrder: 'little' });
    [hr[24], hr[25]] = encodeValues('A7', { type: 'string', count: 4 });
    discreteInputs[4] = 1;
    await helper.load([deviceNode, readNode], flow(sim.port));
    const before = sim.stats.requests;
    const msg = await roundTrip(helper.getNode('r'), helper.getNode('out'), { topic: 'now' });
    assert.deepEqual(msg.payload, { flow_rate: 12.5, setpoint: 2500, running: true, serial: 'A7' });
    assert.deepEqual(msg.quality, { flow_rate: 'ok', setpoint: 'ok', running: 'ok', serial: 'ok' });
    assert.deepEqual(msg.units, { flow_rate: 'm³/h', setpoint: 'bar' });
    assert.equal(typeof msg.ts, 'number');
    assert.equal(msg.topic, 'now', 'the msg is the one that came in');
    // holding 20-25 in one read, input 10-11 and discrete 4 in one each
    assert.equal(msg.reads, 3);
    assert.equal(sim.stats.requests - before, 3);
  });

  it('sends the tags around a hole and tells Catch nodes about the one the device refused', async () => {
    await sim.close();
    sim = await createModbusTcpSimulator({ port: 0, modelOptions: { holes: { holdingRegisters: [[105, 106]] } } });
    sim.model.banks.holdingRegisters[104] = 7;
    const tags = [{ name: 'a', table: 'holding', address: 104 }, { name: 'gone', table: 'holding', address: 105 }, { name: 'b', table: 'holding', address: 107 }];
    // (the helper loads the core catch node for the flow's catch)
    await helper.load([deviceNode, readNode], flow(sim.port, { tags }));
    const [msg, c] = await outAndCaught({});
    assert.deepEqual(msg.payload, { a: 7, gone: null, b: 0 });
    assert.deepEqual(msg.quality, { a: 'ok', gone: 'NINES_ERR_MODBUS_EXCEPTION', b: 'ok' });
    assert.equal(c.error.code, 'NINES_ERR_MODBUS_EXCEPTION');
    assert.match(c.error.message, /1 of 3 tags not read \(gone: NINES_ERR_MODBUS_EXCEPTION\)/);
    assert.deepEqual(c.quality, msg.quality, 'the Catch node gets the msg with its quality');
    // the split is kept for the node's next msgs: one refused read of the hole's tag, not of all three
    const before = sim.stats.requests;
    const [again] = await outAndCaught({});
    assert.equal(again.quality.gone, 'NINES_ERR_MODBUS_EXCEPTION');
    assert.equal(sim.stats.requests - before, 3);
  });

  it('sends a msg with every tag\'s code and tells Catch nodes when the device is down', async () => {
    await helper.load([deviceNode, readNode], flow(sim.port));
    await roundTrip(helper.getNode('r'), helper.getNode('out'), {});
    await sim.close();
    const [msg, c] = await outAndCaught({});
    assert.deepEqual(Object.values(msg.payload), [null, null, null, null]);
    // each read fails as the connection was when it went: closed under it, or not there any more
    for (const q of Object.values(msg.quality)) assert.match(q, /^NINES_ERR_(CONNECTION_CLOSED|NOT_CONNECTED|CONNECT_FAILED)$/);
    // Catch nodes get the poll's failure, one of those codes
    assert.ok(Object.values(msg.quality).includes(c.error.code), `${c.error.code} in ${JSON.stringify(msg.quality)}`);
  });

  it('refuses a bad tag list at deploy with the field, and sends nothing', async () => {
    const tags = [{ name: 'a', table: 'holding', address: 0, type: 'int32' }, { name: 'b', table: 'holding', address: 1 }];
    await helper.load([deviceNode, readNode], flow(sim.port, { tags }));
    const r = helper.getNode('r');
    await waitStatus(r, (s) => s.fill === 'red' && s.text === 'bad argument', 'bad argument');
    const err = await expectError(r, {});
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.equal(err.details.field, 'tags[1].address');
    assert.match(err.message, /overlaps tag "a"/);
    assert.equal(sim.stats.requests, 0);
  });
});
