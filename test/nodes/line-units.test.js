'use strict';

/**
 * A Modbus device config node that is a line of units ("Units on line": 1-5), against the Modbus TCP
 * simulator answering unit ids 1-5 on one connection, as a PLC gateway forwards them. Unit 3 goes
 * silent (sim.model.serve(3, false)): the nodes of unit 3 turn red ("unit 3 down"), its poll's
 * summaries count skipped polls, the nodes of the other units stay green and keep their rate, the
 * device status node reports the unit's state; restored, unit 3 comes back by itself. Asserted by
 * states and counts, not by latency.
 */

const assert = require('node:assert/strict');
const { helper, waitStatus, lastStatus, roundTrip, expectError } = require('./harness');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const deviceNode = require('../../nodes/nines-modbus-device');
const readNode = require('../../nodes/nines-modbus-read');
const pollNode = require('../../nodes/nines-poll');
const statusNode = require('../../nodes/nines-device-status');
const { until } = require('../helpers/wait');

const NODES = [deviceNode, readNode, pollNode, statusNode];
const UNITS = [1, 2, 3, 4, 5];
const RATE = 20; // polls per second, per unit
const TIMEOUT_MS = 150;

function device (port, extra = {}) {
  return { id: 'dev', type: 'nines-modbus-device', name: 'bus', transport: 'tcp', host: '127.0.0.1', port, unitId: 1, units: '1-5', timeout: TIMEOUT_MS, backoffMin: 20, backoffMax: 300, allowWrites: false, ...extra };
}
function poll (unitId) {
  return {
    id: `poll${unitId}`, type: 'nines-poll', name: `u${unitId}`, protocol: 'modbus', modbusDevice: 'dev', asciiDevice: '', unitId,
    fc: 3, address: 0, quantity: 1, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0,
    rate: `${RATE}/s`, policy: 'skip', values: 'on-change', deadband: 0, every: 10, minInterval: 0, interval: 0.5, mode: 'worker', autostart: true,
    wires: [[], ['summaries']]
  };
}
function reader (id, unitId) {
  return { id, type: 'nines-modbus-read', device: 'dev', fc: 3, address: 0, quantity: 1, unitId, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, wires: [['out']] };
}

function lineFlow (port) {
  return [
    device(port),
    ...UNITS.map(poll),
    reader('read3', 3), reader('read2', 2),
    { id: 'status', type: 'nines-device-status', protocol: 'modbus', modbusDevice: 'dev', asciiDevice: '', wires: [['health']] },
    { id: 'summaries', type: 'helper' }, { id: 'out', type: 'helper' }, { id: 'health', type: 'helper' }
  ];
}

/** Every status a node was given from index `from` of its calls on */
function statusesSince (node, from) {
  return node.status.getCalls().filter((c) => c.thisValue === node).slice(from).map((c) => c.args[0]);
}
function statusCount (node) {
  return node.status.getCalls().filter((c) => c.thisValue === node).length;
}
const green = (s) => s.fill === 'green';
const unit3Down = (s) => s.fill === 'red' && s.shape === 'ring' && s.text === 'unit 3 down';

describe('Node-RED: a device that is a line of units', function () {
  this.timeout(40000);
  let sim;
  before(() => helper.startServer());
  after(() => helper.stopServer());
  beforeEach(async () => { sim = await createModbusTcpSimulator({ port: 0, modelOptions: { unitIds: UNITS } }); });
  afterEach(async () => {
    await helper.unload();
    await sim.close();
  });

  it('turns the nodes of a silent unit red ("unit 3 down") while its neighbours stay green and keep polling, and it comes back by itself', async () => {
    await helper.load(NODES, lineFlow(sim.port));
    const summaries = [];
    const health = [];
    helper.getNode('summaries').on('input', (m) => summaries.push({ ...m.payload, topic: m.topic }));
    helper.getNode('health').on('input', (m) => health.push({ at: Date.now(), payload: m.payload }));
    const polls = UNITS.map((id) => helper.getNode(`poll${id}`));
    for (const p of polls) await waitStatus(p, green, 'green', 10000);
    await until(() => health.some((h) => h.payload.state === 'up' && Object.values(h.payload.units).every((u) => u.state === 'up')), 'every unit up');
    const up = health.at(-1).payload;
    assert.deepEqual(Object.keys(up.units), ['unit-1', 'unit-2', 'unit-3', 'unit-4', 'unit-5']);
    assert.deepEqual(up.units['unit-3'], { ...up.units['unit-3'], unitId: 3, state: 'up' });
    const read3 = helper.getNode('read3');
    const read2 = helper.getNode('read2');
    const out = helper.getNode('out');
    assert.deepEqual((await roundTrip(read3, out, {})).modbus.unitId, 3);
    await waitStatus(read3, green, 'green');

    // unit 3 goes silent
    const marks = new Map([...polls.filter((p) => p.id !== 'poll3'), read2].map((n) => [n, statusCount(n)]));
    const silentAt = Date.now();
    const healthFrom = health.length;
    sim.model.serve(3, false);
    await waitStatus(polls[2], unit3Down, '"unit 3 down"', 5000);
    await until(() => health.slice(healthFrom).some((h) => h.payload.units['unit-3'].state === 'down'), 'device status: unit-3 down');
    const down = health.slice(healthFrom).find((h) => h.payload.units['unit-3'].state === 'down');
    // reported within one poll period and one timeout of going silent (and some slack for a busy machine)
    assert.ok(down.at - silentAt <= 1000 / RATE + TIMEOUT_MS + 500, `down after ${down.at - silentAt} ms`);
    assert.equal(down.payload.state, 'up', 'the device stays up');
    assert.equal(down.payload.units['unit-3'].lastError.code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.equal(typeof down.payload.units['unit-3'].retryInMs, 'number');
    for (const id of [1, 2, 4, 5]) assert.equal(down.payload.units[`unit-${id}`].state, 'up');
    await waitStatus(helper.getNode('status'), unit3Down, 'device status node "unit 3 down"');

    // a read of unit 3 fails at once, coded, and its node turns red; a read of unit 2 is answered
    const err = await expectError(read3, {});
    assert.equal(err.code, 'NINES_ERR_UNIT_DOWN');
    assert.equal(err.details.unitId, 3);
    await waitStatus(read3, unit3Down, '"unit 3 down"');
    assert.deepEqual((await roundTrip(read2, out, {})).payload, [0]);
    assert.ok(green(lastStatus(read2)), JSON.stringify(lastStatus(read2)));

    // two seconds of silence: the neighbours keep their rate, unit 3's polls are skipped, not sent
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const backAt = Date.now();
    for (const [n, from] of marks) {
      const red = statusesSince(n, from).filter((s) => s.fill !== 'green');
      assert.deepEqual(red, [], `${n.id} stayed green`);
    }
    const during = (name) => summaries.filter((p) => p.topic === name && p.start >= down.at && p.end <= backAt);
    assert.ok(during('u3').some((p) => p.skipped > 0), 'unit 3\'s polls are counted as skipped');
    for (const id of [1, 2, 4, 5]) {
      const list = during(`u${id}`);
      const intended = list.reduce((a, p) => a + p.count, 0);
      const ok = list.reduce((a, p) => a + p.ok, 0);
      assert.ok(intended > 0, `u${id} has summaries in the silent phase`);
      assert.ok(ok >= 0.95 * intended, `u${id}: ${ok} of ${intended} polls answered`);
    }
    // a unit that stays down sends no msg per failed probe
    const whileDown = health.slice(healthFrom).filter((h) => h.payload.units['unit-3'].state === 'down');
    assert.equal(whileDown.length, 1, JSON.stringify(whileDown.map((h) => h.payload.units['unit-3'])));

    // it answers again: its probe finds it within its backoff, and every node of it turns green by itself
    sim.model.serve(3, true);
    await until(() => health.some((h) => h.at >= backAt && h.payload.units['unit-3'].state === 'up'), 'device status: unit-3 up', 15000);
    await waitStatus(polls[2], green, 'green again', 5000);
    await waitStatus(read3, green, 'green again');
    await waitStatus(helper.getNode('status'), green, 'device status node green again');
    assert.deepEqual((await roundTrip(read3, out, {})).modbus.unitId, 3);
  });

  it('refuses a unit id out of range in "Units on line" with a coded error naming the field, and opens nothing', async () => {
    // 0 is broadcast on a serial line (here behind a serial server): nobody answers it
    await helper.load(NODES, [device(sim.port, { transport: 'rtutcp', units: '0-4' }), reader('read2', 2), poll(2), { id: 'summaries', type: 'helper' }, { id: 'out', type: 'helper' }]);
    const read2 = helper.getNode('read2');
    await waitStatus(read2, (s) => s.fill === 'red' && s.text === 'bad argument', 'bad argument');
    await waitStatus(helper.getNode('poll2'), (s) => s.fill === 'red' && s.text === 'bad argument', 'bad argument');
    const err = await expectError(read2, {});
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.equal(err.details.field, 'units');
    assert.match(err.message, /units has unit id 0: unit ids are 1-247 on a serial line/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(sim.stats.connections, 0);
  });

  it('builds units named unit-<id> into the device spec, and refuses a poll of a unit that is not on the line', async () => {
    await helper.load(NODES, [device(sim.port, { units: '1-2, 5' }), { ...poll(3), wires: [[], []] }]);
    const spec = helper.getNode('dev').spec;
    assert.deepEqual(spec.units.map((u) => [u.name, u.unitId]), [['unit-1', 1], ['unit-2', 2], ['unit-5', 5]]);
    // the default unit backoff: a silent unit is probed from 1 s on, doubling to 10 s
    assert.deepEqual(spec.units[0].backoff, { initialMs: 1000, maxMs: 10000 });
    const p = helper.getNode('poll3');
    await waitStatus(p, (s) => s.fill === 'red' && s.text === 'bad argument', 'bad argument');
    const calls = p.error.getCalls().filter((c) => c.thisValue === p);
    assert.equal(calls[0].args[0].code, 'NINES_ERR_INVALID_ARG');
    assert.equal(calls[0].args[0].details.field, 'unitId');
    assert.match(calls[0].args[0].message, /unitId 3 is not a unit of this line \(units 1-2, 5\)/);
    assert.equal(sim.stats.connections, 0);
  });
});
