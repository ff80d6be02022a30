'use strict';

/**
 * One device, many nodes: the device config node owns the connections, whatever the number of nodes
 * polling, reading and writing through it, and every node shows the device's state alike.
 */

const assert = require('node:assert/strict');
const { helper, roundTrip, expectError, lastStatus, withModbusSim } = require('./harness');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const deviceNode = require('../../nodes/nines-modbus-device');
const readNode = require('../../nodes/nines-modbus-read');
const writeNode = require('../../nodes/nines-modbus-write');
const pollNode = require('../../nodes/nines-poll');
const { until } = require('../helpers/wait');

const NODES = [deviceNode, readNode, writeNode, pollNode];
const POLLS = Array.from({ length: 10 }, (_, i) => `p${i}`);

function flow (port) {
  return [
    { id: 'dev', type: 'nines-modbus-device', name: 'plc', transport: 'tcp', host: '127.0.0.1', port, unitId: 1, timeout: 500, maxConnections: 1, connectTimeout: 1000, backoffMin: 20, backoffMax: 300, allowWrites: true },
    ...POLLS.map((id, i) => ({
      id, type: 'nines-poll', name: `poll ${i}`, protocol: 'modbus', modbusDevice: 'dev', fc: 3, address: i, quantity: 1, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0,
      rate: '20/s', policy: 'skip', values: 'on-change', deadband: 0, every: 10, minInterval: 0, interval: 0.5, mode: 'worker', autostart: true, wires: [['values'], []]
    })),
    { id: 'r', type: 'nines-modbus-read', device: 'dev', fc: 3, address: 0, quantity: 1, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, wires: [['out']] },
    { id: 'w', type: 'nines-modbus-write', device: 'dev', fc: 6, address: 100, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, wires: [['out']] },
    { id: 'values', type: 'helper' },
    { id: 'out', type: 'helper' }
  ];
}

/** The status state shared by all nodes: a poll node shows its p99 where the others say connected */
function state (s) {
  return s && { fill: s.fill, shape: s.shape, text: /^p99 /.test(s.text) ? 'node-red:common.status.connected' : s.text };
}

/** Waits until every node shows the same state and `pred` holds for it; returns that state. */
function allAgree (ids, pred, what, limitMs = 10000) {
  return until(() => {
    const states = ids.map((id) => state(lastStatus(helper.getNode(id))));
    if (!states[0] || !pred(states[0])) return null;
    return states.every((s) => s && s.fill === states[0].fill && s.shape === states[0].shape && s.text === states[0].text) ? states[0] : null;
  }, `every node ${what}`, limitMs);
}

describe('nodes sharing one device', function () {
  this.timeout(30000);
  let sim;
  withModbusSim(() => sim, (s) => { sim = s; });

  it('ten poll nodes, a read and a write node on a device with maxConnections 1 make one connection', async () => {
    for (let i = 0; i < POLLS.length; i++) sim.model.banks.holdingRegisters[i] = 100 + i;
    await helper.load(NODES, flow(sim.port));
    const seen = new Map();
    helper.getNode('values').on('input', (m) => seen.set(m.topic, m.payload));
    await until(() => seen.size === POLLS.length, 'values from every poll node');
    POLLS.forEach((id, i) => assert.deepEqual(seen.get(`poll ${i}`), [100 + i]));
    const out = helper.getNode('out');
    const [read, written] = await Promise.all([
      roundTrip(helper.getNode('r'), out, {}),
      roundTrip(helper.getNode('w'), out, { payload: 7 })
    ]);
    assert.deepEqual(read.payload, [100]);
    assert.equal(written.modbus.written, 7);
    assert.equal(sim.model.banks.holdingRegisters[100], 7);
    assert.equal(sim.stats.connections, 1, 'connections accepted by the simulator');
    assert.equal(sim.stats.open, 1);
    assert.equal(sim.stats.refused, 0);
    const up = await allAgree([...POLLS, 'r', 'w'], (s) => s.fill === 'green', 'connected');
    assert.deepEqual(up, { fill: 'green', shape: 'dot', text: 'node-red:common.status.connected' });
  });

  it('every node shows the same code while the device is down, and turns green again when it is back', async () => {
    await helper.load(NODES, flow(sim.port));
    const ids = [...POLLS, 'r', 'w'];
    // the read and write nodes register at deploy: no msg is needed for their status
    await allAgree(ids, (s) => s.fill === 'green', 'connected');
    const port = sim.port;
    await sim.close();
    const down = await allAgree(ids, (s) => s.fill === 'red' && s.text === 'connect failed', 'connect failed');
    assert.equal(down.shape, 'ring');
    // a request while down fails at once with the device's code, and leaves the status alone
    const err = await expectError(helper.getNode('r'), {});
    assert.equal(err.code, 'NINES_ERR_NOT_CONNECTED');
    await allAgree(ids, (s) => s.fill === 'red' && s.text === 'connect failed', 'still connect failed');
    sim = await createModbusTcpSimulator({ port });
    await allAgree(ids, (s) => s.fill === 'green', 'connected again');
    await until(() => sim.stats.requests > 0, 'polls on the restarted device');
    assert.equal(sim.stats.connections, 1);
  });
});

describe('a device\'s own warnings', function () {
  this.timeout(20000);
  before(() => helper.startServer());
  after(() => helper.stopServer());
  afterEach(() => helper.unload());

  it('are logged through a named node of the device when it has one, not the first unnamed one (issue 21)', async () => {
    // nothing listens on port 1: the device's connection failure is reported once, by one of its nodes
    await helper.load([deviceNode, readNode], [
      { id: 'dev', type: 'nines-modbus-device', name: 'boiler PLC', transport: 'tcp', host: '127.0.0.1', port: 1, unitId: 1, timeout: 200, maxConnections: 1, connectTimeout: 200, backoffMin: 20, backoffMax: 200, allowWrites: false },
      { id: 'r1', type: 'nines-modbus-read', device: 'dev', fc: 3, address: 0, quantity: 1, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, wires: [[]] },
      { id: 'r2', type: 'nines-modbus-read', name: 'boiler temperature', device: 'dev', fc: 3, address: 1, quantity: 1, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, wires: [[]] }
    ]);
    const warned = [];
    for (const id of ['r1', 'r2']) helper.getNode(id).on('call:warn', (c) => warned.push([id, String(c.args[0])]));
    // a request makes the device connect (and fail)
    helper.getNode('r1').receive({ payload: 1 });
    await until(() => warned.length > 0, 'the device\'s warning', 10000);
    assert.equal(warned[0][0], 'r2', JSON.stringify(warned));
    // (the test runtime gives the catalog key; Node-RED's catalog names the device in it)
    assert.match(warned[0][1], /nines-modbus-device\.errors\.connection/);
  });
});
