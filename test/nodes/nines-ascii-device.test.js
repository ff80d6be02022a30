'use strict';

const assert = require('node:assert/strict');
const { helper, roundTrip, expectError, waitStatus } = require('./harness');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const deviceNode = require('../../nodes/nines-ascii-device');
const asciiNode = require('../../nodes/nines-ascii');
const { until } = require('../helpers/wait');

function device (port, extra = {}) {
  return { id: 'dev', type: 'nines-ascii-device', host: '127.0.0.1', port, address: '01', checksum: false, timeout: 300, maxConnections: 1, ...extra };
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

  it('exposes its target URL and builds its device spec from the settings', async () => {
    await helper.load([deviceNode], [device(sim.port, { address: 'a5', checksum: true, maxConnections: '4', connectTimeout: '750', backoffMin: 20, backoffMax: '400' })]);
    const dev = helper.getNode('dev');
    assert.equal(dev.target, `ascii://127.0.0.1:${sim.port}?address=A5&checksum=on`);
    assert.equal(dev.address, 'A5');
    assert.equal(dev.checksum, true);
    assert.equal(dev.timeoutMs, 300);
    assert.equal(dev.spec.name, 'dev', 'the device is named by the config node id');
    assert.equal(dev.spec.target.url, dev.target);
    assert.equal(dev.spec.maxConnections, 4);
    assert.equal(dev.spec.timeoutMs, 300);
    assert.equal(dev.spec.connectTimeoutMs, 750);
    assert.deepEqual(dev.spec.backoff, { initialMs: 20, maxMs: 400 });
  });

  it('defaults to one connection, and reads the connections of flows saved before maxConnections', async () => {
    await helper.load([deviceNode], [device(sim.port, { maxConnections: undefined }), { ...device(sim.port, { maxConnections: undefined, connections: 3 }), id: 'old' }]);
    assert.equal(helper.getNode('dev').spec.maxConnections, 1);
    assert.equal(helper.getNode('old').spec.maxConnections, 3);
  });

  it('opens its connections when the first node uses it and shares them', async () => {
    await helper.load([deviceNode, asciiNode], [device(sim.port, { maxConnections: 2 }), user('a'), user('b', { command: '$01M' }), { id: 'out', type: 'helper' }]);
    const out = helper.getNode('out');
    const replies = await Promise.all([
      roundTrip(helper.getNode('a'), out, {}),
      roundTrip(helper.getNode('b'), out, {})
    ]);
    assert.deepEqual(replies.map((m) => m.command).sort(), ['$01M', '@01']);
    await until(() => sim.stats.connections === 2, 'two connections');
  });

  it('closes its connections when the flow stops', async () => {
    await helper.load([deviceNode, asciiNode], [device(sim.port), user('a'), { id: 'out', type: 'helper' }]);
    await waitStatus(helper.getNode('a'), (s) => s.fill === 'green', 'connected');
    assert.equal(sim.openConnections, 1);
    await helper.unload();
    await until(() => sim.openConnections === 0, 'the simulator to see the connection close');
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

  it('says a lost device and bad settings through a user node, never through the config node', async () => {
    const port = sim.port;
    await sim.close();
    await helper.load([deviceNode, asciiNode], [device(port, { backoffMin: 10, backoffMax: 20 }), user('a'), { ...device(port, { address: 'G1' }), id: 'bad' }, user('b', { device: 'bad' }), { id: 'out', type: 'helper' }]);
    const a = helper.getNode('a');
    await waitStatus(a, (s) => s.fill === 'red' && s.text === 'connect failed', 'connect failed');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const calls = (node, m) => node[m].getCalls().filter((c) => c.thisValue === node).map((c) => c.args[0]);
    for (const id of ['dev', 'bad']) {
      const dev = helper.getNode(id);
      assert.deepEqual([calls(dev, 'warn'), calls(dev, 'error')], [[], []], `config node ${id} logs nothing itself`);
    }
    assert.deepEqual(calls(a, 'warn'), ['nines-ascii-device.errors.connection'], 'once, not once per retry');
    assert.deepEqual(calls(helper.getNode('b'), 'error'), ['nines-ascii-device.errors.config']);
    sim = await createAsciiSimulator({ port: 0 });
  });

  const bad = [
    ['a connection count of 0', { maxConnections: 0 }, 'maxConnections', /maxConnections must be an integer from 1 to 64; got 0/],
    ['65 connections', { maxConnections: '65' }, 'maxConnections', /maxConnections must be an integer from 1 to 64; got "65"/],
    ['a negative backoff', { backoffMin: -1 }, 'backoffMin', /backoffMin is not a duration; .*; got -1/],
    ['a backoff maximum below its minimum', { backoffMin: 500, backoffMax: 100 }, 'backoffMax', /backoffMax must be at least backoffMin \(500 ms\); got 100/],
    ['a connect timeout of 0', { connectTimeout: '0' }, 'connectTimeout', /connectTimeout must be a whole number of ms from 1ms to 1h; got "0"/]
  ];
  for (const [what, settings, field, re] of bad) {
    it(`turns ${what} into a coded error naming ${field}, and connects to nothing`, async () => {
      await helper.load([deviceNode, asciiNode], [device(sim.port, settings), user('a'), { id: 'out', type: 'helper' }]);
      const a = helper.getNode('a');
      await waitStatus(a, (s) => s.fill === 'red' && s.text === 'bad argument', 'bad argument');
      const err = await expectError(a, {});
      assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
      assert.equal(err.details.field, field);
      assert.match(err.message, re);
      assert.equal(sim.stats.connections, 0);
    });
  }
});
