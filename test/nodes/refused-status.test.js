'use strict';

/**
 * Issue 21, defect 5: a msg refused before anything is sent (a value its tag cannot hold, a read-only
 * tag, a bad msg property) shows on the node's status as a yellow ring "refused: …" until the node's
 * next request goes through; it left the status a green "connected" dot. The device's own health
 * keeps its colours: a device that goes down shows red over a refusal.
 */

const assert = require('node:assert/strict');
const { helper, roundTrip, expectError, waitStatus, lastStatus, withModbusSim } = require('./harness');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const modbusDevice = require('../../nodes/nines-modbus-device');
const asciiDevice = require('../../nodes/nines-ascii-device');
const writeNode = require('../../nodes/nines-modbus-write');
const readNode = require('../../nodes/nines-modbus-read');
const asciiNode = require('../../nodes/nines-ascii');

const TAGS = [
  { name: 'speed', table: 'holding', address: 12, type: 'int16' },
  { name: 'running', table: 'discrete', address: 0 }
];

const green = (s) => s.fill === 'green' && s.shape === 'dot';

function modbusFlow (port) {
  return [
    { id: 'dev', type: 'nines-modbus-device', transport: 'tcp', host: '127.0.0.1', port, unitId: 1, timeout: 300, allowWrites: true },
    { id: 'wt', type: 'nines-modbus-write', device: 'dev', source: 'tags', tags: TAGS, wires: [['out']] },
    { id: 'w', type: 'nines-modbus-write', device: 'dev', fc: 6, address: 0, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, wires: [['out']] },
    { id: 'r', type: 'nines-modbus-read', device: 'dev', fc: 3, address: 0, quantity: 1, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, wires: [['out']] },
    { id: 'out', type: 'helper' }
  ];
}

describe('a refused msg shows on the node\'s status, apart from the device\'s health', function () {
  this.timeout(20000);
  // a Modbus simulator per test (the ASCII test starts its own)
  let sim;
  withModbusSim(() => sim, (s) => { sim = s; });

  describe('on Modbus', () => {
    beforeEach(async () => {
      await helper.load([modbusDevice, writeNode, readNode], modbusFlow(sim.port));
      for (const id of ['wt', 'w', 'r']) await waitStatus(helper.getNode(id), green, 'connected');
    });

    for (const [what, id, msg, code, text] of [
      ['a value its tag cannot hold', 'wt', { payload: { speed: 3.7 } }, 'NINES_ERR_INVALID_VALUE', 'refused: bad value'],
      ['a read-only tag', 'wt', { payload: { running: true } }, 'NINES_ERR_INVALID_ARG', 'refused: bad argument'],
      ['a value its type cannot hold (single request)', 'w', { payload: 70000 }, 'NINES_ERR_INVALID_VALUE', 'refused: bad value'],
      ['a read with a bad msg.address', 'r', { address: 70000 }, 'NINES_ERR_INVALID_ARG', 'refused: bad argument']
    ]) {
      it(`shows ${what} as a yellow ring "${text}" until the next request goes through`, async () => {
        const node = helper.getNode(id);
        const err = await expectError(node, msg);
        assert.equal(err.code, code);
        assert.equal(sim.stats.requests, 0, 'nothing sent');
        assert.deepEqual(await waitStatus(node, (s) => s.fill === 'yellow', 'refused'), { fill: 'yellow', shape: 'ring', text });
        // the other nodes of the device stay green: the device is fine
        for (const other of ['wt', 'w', 'r'].filter((x) => x !== id)) assert.ok(green(lastStatus(helper.getNode(other))), other);
        const good = id === 'wt' ? { payload: { speed: 4 } } : id === 'w' ? { payload: 7 } : {};
        await roundTrip(node, helper.getNode('out'), good);
        await waitStatus(node, green, 'connected again');
      });
    }

    it('shows the device going down in red over a refusal, and the refusal again once it is back', async () => {
      const w = helper.getNode('w');
      await expectError(w, { payload: 70000 });
      await waitStatus(w, (s) => s.fill === 'yellow', 'refused');
      const port = sim.port;
      await sim.close();
      await waitStatus(w, (s) => s.fill === 'red', 'the device down', 10000);
      // back on the same port: the device is up, and the last msg was still refused
      sim = await createModbusTcpSimulator({ port });
      await waitStatus(w, (s) => s.fill === 'yellow' && s.text === 'refused: bad value', 'refused again', 15000);
      await roundTrip(w, helper.getNode('out'), { payload: 7 });
      await waitStatus(w, green, 'connected after a good write');
    });
  });

  it('shows an ASCII command refused before it is sent, until the next reply', async () => {
    const ed = await createAsciiSimulator({ port: 0, model: 'ED-588' });
    try {
      await helper.load([asciiDevice, asciiNode], [
        { id: 'dev', type: 'nines-ascii-device', host: '127.0.0.1', port: ed.port, address: '01', checksum: false, timeout: 200, maxConnections: 1 },
        { id: 'a', type: 'nines-ascii', device: 'dev', command: '', wires: [['out']] },
        { id: 'out', type: 'helper' }
      ]);
      const a = helper.getNode('a');
      await waitStatus(a, green, 'connected');
      const err = await expectError(a, { command: '&01' });
      assert.equal(err.code, 'NINES_ERR_INVALID_COMMAND');
      assert.deepEqual(await waitStatus(a, (s) => s.fill === 'yellow', 'refused'), { fill: 'yellow', shape: 'ring', text: 'refused: bad command' });
      await roundTrip(a, helper.getNode('out'), { command: '@01' });
      await waitStatus(a, green, 'connected again');
    } finally {
      await helper.unload();
      await ed.close();
    }
  });
});
