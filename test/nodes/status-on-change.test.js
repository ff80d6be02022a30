'use strict';

/**
 * A request node sends its status to the editor when it changes, not with every msg: at 10 msgs
 * a second, an unchanged "connected" would otherwise be 10 status messages a second.
 */

const assert = require('node:assert/strict');
const { helper, roundTrip, waitStatus } = require('./harness');
const { showStatus, CONNECTED } = require('../../nodes/lib/status');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const modbusDevice = require('../../nodes/nines-modbus-device');
const asciiDevice = require('../../nodes/nines-ascii-device');
const readNode = require('../../nodes/nines-modbus-read');
const writeNode = require('../../nodes/nines-modbus-write');
const asciiNode = require('../../nodes/nines-ascii');

const N = 20;

describe('status only when it changes', function () {
  let modbusSim;
  let asciiSim;

  before(async () => {
    await helper.startServer();
    [modbusSim, asciiSim] = await Promise.all([createModbusTcpSimulator({ port: 0 }), createAsciiSimulator({ port: 0 })]);
  });
  after(async () => {
    await helper.stopServer();
    await Promise.all([modbusSim.close(), asciiSim.close()]);
  });
  afterEach(() => helper.unload());

  it('showStatus sends a status once, then again only when fill, shape or text differ', () => {
    const sent = [];
    const node = { status: (s) => sent.push(s) };
    assert.equal(showStatus(node, CONNECTED), true);
    assert.equal(showStatus(node, { ...CONNECTED }), false);
    assert.equal(showStatus(node, { fill: 'red', shape: 'ring', text: 'timeout' }), true);
    assert.equal(showStatus(node, CONNECTED), true);
    assert.equal(sent.length, 3);
    // per node: another node's status is its own
    const other = { status: (s) => sent.push(s) };
    assert.equal(showStatus(other, CONNECTED), true);
  });

  const cases = [
    ['nines-modbus-read', [modbusDevice, readNode], () => [
      { id: 'dev', type: 'nines-modbus-device', transport: 'tcp', host: '127.0.0.1', port: modbusSim.port, unitId: 1, timeout: 500 },
      { id: 'n', type: 'nines-modbus-read', device: 'dev', fc: 3, address: 0, quantity: 1, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, wires: [['out']] }
    ], {}],
    ['nines-modbus-write', [modbusDevice, writeNode], () => [
      { id: 'dev', type: 'nines-modbus-device', transport: 'tcp', host: '127.0.0.1', port: modbusSim.port, unitId: 1, timeout: 500, allowWrites: true },
      { id: 'n', type: 'nines-modbus-write', device: 'dev', fc: 6, address: 0, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, wires: [['out']] }
    ], { payload: 7 }],
    ['nines-ascii', [asciiDevice, asciiNode], () => [
      { id: 'dev', type: 'nines-ascii-device', host: '127.0.0.1', port: asciiSim.port, address: '01', timeout: 500 },
      { id: 'n', type: 'nines-ascii', device: 'dev', command: '@01', wires: [['out']] }
    ], {}]
  ];

  for (const [type, nodes, flow, msg] of cases) {
    it(`${type} sends "connected" once over ${N} msgs, not once per msg`, async () => {
      await helper.load(nodes, [...flow(), { id: 'out', type: 'helper' }]);
      const node = helper.getNode('n');
      const out = helper.getNode('out');
      const statuses = () => node.status.getCalls().filter((c) => c.thisValue === node).map((c) => c.args[0]);
      await waitStatus(node, (s) => s.fill === 'green', 'connected');
      for (let i = 0; i < N; i++) await roundTrip(node, out, { ...msg });
      const connected = statuses().filter((s) => s.text === 'node-red:common.status.connected');
      assert.equal(connected.length, 1, `${connected.length} "connected" statuses over ${N} msgs`);
      // and never the same status twice in a row
      const all = statuses();
      for (let i = 1; i < all.length; i++) assert.notDeepEqual(all[i], all[i - 1], `status ${i} repeats ${JSON.stringify(all[i])}`);
    });
  }
});
