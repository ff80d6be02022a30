'use strict';

const assert = require('node:assert/strict');
const { helper, roundTrip, expectError, waitStatus } = require('./harness');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const deviceNode = require('../../nodes/nines-ascii-device');
const asciiNode = require('../../nodes/nines-ascii');

function flow (port, node = {}, device = {}) {
  return [
    { id: 'dev', type: 'nines-ascii-device', host: '127.0.0.1', port, address: '01', checksum: false, timeout: 200, maxConnections: 1, ...device },
    { id: 'a', type: 'nines-ascii', device: 'dev', command: '@01', wires: [['out']], ...node },
    { id: 'out', type: 'helper' }
  ];
}

describe('nines-ascii', function () {
  let sim;

  before(() => helper.startServer());
  after(() => helper.stopServer());
  afterEach(async () => {
    await helper.unload();
    await sim.close();
  });

  describe('on an ED-588', () => {
    beforeEach(async () => { sim = await createAsciiSimulator({ port: 0, model: 'ED-588' }); });

    it('reads all lines as booleans, with raw reply, round trip and command', async () => {
      await helper.load([deviceNode, asciiNode], flow(sim.port));
      const msg = await roundTrip(helper.getNode('a'), helper.getNode('out'), { payload: 1 });
      assert.deepEqual(msg.payload.outputs, new Array(8).fill(false));
      assert.deepEqual(msg.payload.inputs, new Array(8).fill(true));
      assert.equal(msg.payload.value, 0x00FF);
      assert.equal(msg.raw, '>00FF');
      assert.equal(msg.command, '@01');
      assert.equal(typeof msg.latency, 'number');
      assert.ok(msg.latency > 0);
    });

    it('takes msg.command, else a string msg.payload, when the node has no command', async () => {
      await helper.load([deviceNode, asciiNode], flow(sim.port, { command: '' }));
      const a = helper.getNode('a');
      const out = helper.getNode('out');
      assert.equal((await roundTrip(a, out, { command: '#011001' })).payload, true);
      assert.equal((await roundTrip(a, out, { payload: '#011101' })).payload, true);
      const lines = await roundTrip(a, out, { payload: '@01' });
      assert.deepEqual(lines.payload.outputs, [true, true, false, false, false, false, false, false]);
      assert.equal(lines.raw, '>03FF');
    });

    it('keeps its own command when a msg carries another (so chained nodes do not leak commands)', async () => {
      await helper.load([deviceNode, asciiNode], flow(sim.port));
      const msg = await roundTrip(helper.getNode('a'), helper.getNode('out'), { command: '$01M' });
      assert.equal(msg.command, '@01');
    });

    it('gives counters as numbers and the name as text', async () => {
      await helper.load([deviceNode, asciiNode], flow(sim.port, { command: '' }));
      const a = helper.getNode('a');
      const out = helper.getNode('out');
      assert.equal((await roundTrip(a, out, { payload: '#012' })).payload, 0);
      assert.equal((await roundTrip(a, out, { payload: '$01M' })).payload, 'ED-588');
    });

    describe('bad msgs get a coded error and the node stays healthy', () => {
      beforeEach(() => helper.load([deviceNode, asciiNode], flow(sim.port, { command: '' })));
      const cases = [
        ['no command at all', { payload: 42 }, 'NINES_ERR_INVALID_ARG', /no command/],
        ['a msg.command that is not a string', { command: 7 }, 'NINES_ERR_INVALID_ARG', /msg.command must be a string/],
        ['a bad prefix', { payload: 'x01' }, 'NINES_ERR_INVALID_COMMAND', /must start with one of/],
        ['lower case', { payload: '$01m' }, 'NINES_ERR_INVALID_COMMAND', /lower-case/],
        ['a CR inside', { payload: '@01\r@02' }, 'NINES_ERR_INVALID_COMMAND', /CR/]
      ];
      for (const [what, msg, code, re] of cases) {
        it(`rejects ${what} (${code})`, async () => {
          const a = helper.getNode('a');
          const err = await expectError(a, msg);
          assert.equal(err.code, code);
          assert.match(err.message, re);
          assert.equal(sim.stats.requests, 0, 'nothing was sent');
          const ok = await roundTrip(a, helper.getNode('out'), { payload: '@01' });
          assert.equal(ok.raw, '>00FF');
        });
      }
    });

    it('reports a "?" reply as NINES_ERR_DEVICE_INVALID in the error and the status', async () => {
      await helper.load([deviceNode, asciiNode], flow(sim.port, { command: '#019' }));
      const a = helper.getNode('a');
      const err = await expectError(a, {});
      assert.equal(err.code, 'NINES_ERR_DEVICE_INVALID');
      await waitStatus(a, (s) => s.fill === 'red' && s.text === 'device: invalid', 'device: invalid');
    });

    it('times out on a silent device (wrong address), then turns green on the next good reply', async () => {
      await helper.load([deviceNode, asciiNode], flow(sim.port, { command: '' }));
      const a = helper.getNode('a');
      const err = await expectError(a, { payload: '@02' });
      assert.equal(err.code, 'NINES_ERR_REPLY_TIMEOUT');
      await waitStatus(a, (s) => s.fill === 'red' && s.text === 'timeout', 'timeout');
      await roundTrip(a, helper.getNode('out'), { payload: '@01' });
      await waitStatus(a, (s) => s.fill === 'green', 'green');
    });

    it('shows the error while the device is down and recovers by itself when it returns', async () => {
      await helper.load([deviceNode, asciiNode], flow(sim.port));
      const a = helper.getNode('a');
      await waitStatus(a, (s) => s.fill === 'green', 'connected');
      const port = sim.port;
      await sim.close();
      await waitStatus(a, (s) => s.fill === 'red', 'red while down');
      const err = await expectError(a, {});
      assert.ok(['NINES_ERR_REPLY_TIMEOUT', 'NINES_ERR_CONNECT_FAILED', 'NINES_ERR_CONNECTION_CLOSED', 'NINES_ERR_NOT_CONNECTED'].includes(err.code), err.code);
      sim = await createAsciiSimulator({ port, model: 'ED-588' });
      await waitStatus(a, (s) => s.fill === 'green', 'green again', 15000);
      const msg = await roundTrip(a, helper.getNode('out'), {});
      assert.equal(msg.raw, '>00FF');
    });

    it('refuses every msg when no device is selected', async () => {
      await helper.load([deviceNode, asciiNode], flow(sim.port, { device: '' }));
      const a = helper.getNode('a');
      await waitStatus(a, (s) => s.text === 'nines-ascii.status.no-device', 'no device');
      const err = await expectError(a, {});
      assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    });
  });

  it('sets and reads back an ED-560 analog output in volts', async () => {
    sim = await createAsciiSimulator({ port: 0, model: 'ED-560' });
    await helper.load([deviceNode, asciiNode], flow(sim.port, { command: '' }));
    const a = helper.getNode('a');
    const out = helper.getNode('out');
    assert.equal((await roundTrip(a, out, { payload: '#012+07.250' })).payload, true);
    assert.equal((await roundTrip(a, out, { payload: '$0162' })).payload, 7.25);
  });

  it('adds and checks checksums when the device has checksum mode on', async () => {
    sim = await createAsciiSimulator({ port: 0, model: 'ED-588', checksum: true });
    await helper.load([deviceNode, asciiNode], flow(sim.port, {}, { checksum: true }));
    const msg = await roundTrip(helper.getNode('a'), helper.getNode('out'), {});
    assert.equal(msg.raw, '>00FF');
  });
});
