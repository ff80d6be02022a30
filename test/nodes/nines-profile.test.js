'use strict';

/**
 * nines-profile: one tag list, described once, used by the poll, read and write nodes of every
 * device of a model; a bad profile is refused by each node that uses it, naming the profile and the
 * tag's field, and nothing is sent.
 */

const assert = require('node:assert/strict');
const { helper, roundTrip, expectError, waitStatus } = require('./harness');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const deviceNode = require('../../nodes/nines-modbus-device');
const profileNode = require('../../nodes/nines-profile');
const pollNode = require('../../nodes/nines-poll');
const readNode = require('../../nodes/nines-modbus-read');
const writeNode = require('../../nodes/nines-modbus-write');
const { until } = require('../helpers/wait');

const NODES = [deviceNode, profileNode, pollNode, readNode, writeNode];

const METER = [
  { name: 'id', table: 'holding', address: 0, type: 'uint16' },
  { name: 'setpoint', table: 'holding', address: 10, type: 'int16', scale: 0.1, unit: 'bar' }
];

/** Two units of a simulator (the signature preset: holding register a of unit u holds u × 1000 + a), one profile */
function flow (port, profile = {}) {
  const device = (id, unitId) => ({ id, type: 'nines-modbus-device', transport: 'tcp', host: '127.0.0.1', port, unitId, timeout: 300, backoffMin: 20, backoffMax: 200, allowWrites: true });
  return [
    { id: 'prof', type: 'nines-profile', name: 'meter', protocol: 'modbus', tags: METER, ...profile },
    device('d1', 1),
    device('d2', 2),
    { id: 'p', type: 'nines-poll', protocol: 'modbus', modbusDevice: 'd1', source: 'profile', profile: 'prof', rate: '20/s', values: 'on-change', deadband: 0, interval: 1, mode: 'worker', autostart: true, wires: [['values'], []] },
    { id: 'r', type: 'nines-modbus-read', device: 'd2', source: 'profile', profile: 'prof', wires: [['out']] },
    { id: 'w', type: 'nines-modbus-write', device: 'd2', source: 'profile', profile: 'prof', wires: [['written']] },
    { id: 'values', type: 'helper' },
    { id: 'out', type: 'helper' },
    { id: 'written', type: 'helper' }
  ];
}

describe('nines-profile: one tag list for the nodes of many devices', function () {
  let sim;
  before(() => helper.startServer());
  after(() => helper.stopServer());
  beforeEach(async () => { sim = await createModbusTcpSimulator({ port: 0, modelOptions: { unitIds: [1, 2], preset: 'signature' } }); });
  afterEach(async () => {
    await helper.unload();
    await sim.close();
  });

  it('a poll, a read and a write on two devices take the tags of the one profile', async () => {
    await helper.load(NODES, flow(sim.port));
    const values = [];
    helper.getNode('values').on('input', (m) => values.push(m));
    await until(() => values.length > 0, 'the poll\'s first values');
    assert.deepEqual(values[0].payload, { id: 1000, setpoint: 101 });
    assert.deepEqual(values[0].units, { setpoint: 'bar' });
    const read = await roundTrip(helper.getNode('r'), helper.getNode('out'), {});
    assert.deepEqual(read.payload, { id: 2000, setpoint: 201 });
    // a write by the profile's names, encoded by its tags
    await roundTrip(helper.getNode('w'), helper.getNode('written'), { payload: { setpoint: -1.5 } });
    assert.deepEqual((await roundTrip(helper.getNode('r'), helper.getNode('out'), {})).payload, { id: 2000, setpoint: -1.5 });
  });

  it('a bad profile is refused by each node that uses it, naming the profile and the field; nothing is sent', async () => {
    const overlap = [METER[0], { name: 'more', table: 'holding', address: 0, type: 'uint16' }];
    await helper.load(NODES, flow(sim.port, { tags: overlap }));
    for (const id of ['p', 'r', 'w']) {
      const node = helper.getNode(id);
      await waitStatus(node, (s) => s.fill === 'red' && s.text === 'bad argument', `${id} bad argument`);
      const err = await expectError(node, id === 'w' ? { payload: { id: 1 } } : { topic: 'start' });
      assert.equal(err.code, 'NINES_ERR_INVALID_ARG', id);
      assert.equal(err.details.field, 'profile', id);
      assert.equal(err.details.profileField, 'tags[1].address', id);
      assert.match(err.message, /^profile "meter": .*tags\[1\]\.address/, id);
    }
    assert.equal(sim.stats.requests, 0);
  });

  it('refuses a profile of the other protocol, and a source "profile" naming none', async () => {
    await helper.load(NODES, flow(sim.port, { protocol: 'ascii', tags: [{ name: 'door', table: 'input', address: 0 }] }));
    const err = await expectError(helper.getNode('r'), {});
    assert.equal(err.details.field, 'profile');
    assert.match(err.message, /profile "meter" holds ascii tags; this node's device is modbus/);
    await helper.unload();
    const none = flow(sim.port);
    none[4].profile = '';
    await helper.load(NODES, none);
    const e2 = await expectError(helper.getNode('r'), {});
    assert.equal(e2.details.field, 'profile');
    assert.match(e2.message, /must be a nines-profile config node/);
    assert.equal(sim.stats.requests, 0);
  });
});
