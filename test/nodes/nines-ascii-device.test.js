'use strict';

const assert = require('node:assert/strict');
const { helper, roundTrip, expectError, waitStatus, waitFor } = require('./harness');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const deviceNode = require('../../nodes/nines-ascii-device');
const asciiNode = require('../../nodes/nines-ascii');

function device (port, extra = {}) {
  return { id: 'dev', type: 'nines-ascii-device', host: '127.0.0.1', port, address: '01', checksum: false, timeout: 300, connections: 1, ...extra };
}
function user (id, extra = {}) {
  return { id, type: 'nines-ascii', device: 'dev', command: '@01', wires: [['out']], ...extra };
}

describe('nines-ascii-device', function () {
  let sim;

  before(() => helper.startServer());
  after(() => helper.stopServer());
  beforeEach(async () => { sim = await createAsciiSimulator({ port: 0 }); });
  afterEach(async () => {
    await helper.unload();
    await sim.close();
  });

  it('exposes its target URL for the nodes that open their own connections', async () => {
    await helper.load([deviceNode], [device(sim.port, { address: 'a5', checksum: true })]);
    const dev = helper.getNode('dev');
    assert.equal(dev.target, `ascii://127.0.0.1:${sim.port}?address=A5&checksum=on`);
    assert.equal(dev.address, 'A5');
    assert.equal(dev.checksum, true);
    assert.equal(dev.timeoutMs, 300);
  });

  it('opens its connections when the first node uses it and shares them', async () => {
    await helper.load([deviceNode, asciiNode], [device(sim.port, { connections: 2 }), user('a'), user('b', { command: '$01M' }), { id: 'out', type: 'helper' }]);
    const out = helper.getNode('out');
    const replies = await Promise.all([
      roundTrip(helper.getNode('a'), out, {}),
      roundTrip(helper.getNode('b'), out, {})
    ]);
    assert.deepEqual(replies.map((m) => m.command).sort(), ['$01M', '@01']);
    await waitFor(() => sim.stats.connections === 2, 'two connections');
  });

  it('closes its connections when the flow stops', async () => {
    await helper.load([deviceNode, asciiNode], [device(sim.port), user('a'), { id: 'out', type: 'helper' }]);
    await waitStatus(helper.getNode('a'), (s) => s.fill === 'green', 'connected');
    assert.equal(sim.openConnections, 1);
    await helper.unload();
    await waitFor(() => sim.openConnections === 0, 'the simulator to see the connection close');
  });

  it('turns a bad address in the flow JSON into a coded error on its users', async () => {
    await helper.load([deviceNode, asciiNode], [device(sim.port, { address: 'G1' }), user('a'), { id: 'out', type: 'helper' }]);
    const a = helper.getNode('a');
    await waitStatus(a, (s) => s.fill === 'red' && s.text === 'bad argument', 'bad argument');
    const err = await expectError(a, {});
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.match(err.message, /address must be two hex digits/);
    assert.equal(sim.stats.connections, 0);
  });

  it('turns a bad connection count into a coded error', async () => {
    await helper.load([deviceNode, asciiNode], [device(sim.port, { connections: 20 }), user('a'), { id: 'out', type: 'helper' }]);
    const err = await expectError(helper.getNode('a'), {});
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.match(err.message, /connections must be an integer from 1 to 8; got 20/);
  });
});
