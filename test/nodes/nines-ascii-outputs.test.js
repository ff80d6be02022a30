'use strict';

/**
 * nines-ascii with outputs as data: msg.payload {outputs: [8 booleans]} → `@AADD`, {line, value} →
 * `#AAAcDD`, with the device's address; a payload that is neither, or not quite, is refused with a
 * coded error naming the msg property, and nothing is sent.
 */

const assert = require('node:assert/strict');
const { helper, roundTrip, expectError } = require('./harness');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const deviceNode = require('../../nodes/nines-ascii-device');
const asciiNode = require('../../nodes/nines-ascii');

function flow (port, node = {}) {
  return [
    { id: 'dev', type: 'nines-ascii-device', host: '127.0.0.1', port, address: '0A', checksum: false, timeout: 200 },
    { id: 'a', type: 'nines-ascii', device: 'dev', command: '', wires: [['out']], ...node },
    { id: 'out', type: 'helper' }
  ];
}

describe('nines-ascii outputs as data', function () {
  let sim;
  before(() => helper.startServer());
  after(() => helper.stopServer());
  beforeEach(async () => { sim = await createAsciiSimulator({ port: 0, model: 'ED-588', address: '0A' }); });
  afterEach(async () => {
    await helper.unload();
    await sim.close();
  });

  /** The outputs as booleans, output 0 first */
  const outputs = () => Array.from({ length: 8 }, (_, i) => ((sim.device.outputs >> i) & 1) === 1);

  it('sets all eight outputs from { outputs: [...] } with one @AADD', async () => {
    await helper.load([deviceNode, asciiNode], flow(sim.port));
    const want = [true, false, true, true, false, false, false, true];
    const msg = await roundTrip(helper.getNode('a'), helper.getNode('out'), { payload: { outputs: want } });
    assert.equal(msg.command, '@0A8D');
    assert.equal(msg.payload, true, 'an acknowledged write');
    assert.deepEqual(outputs(), want);
  });

  it('sets one line from { line, value }, leaving the others', async () => {
    await helper.load([deviceNode, asciiNode], flow(sim.port));
    const a = helper.getNode('a');
    const out = helper.getNode('out');
    await roundTrip(a, out, { payload: { outputs: [true, true, false, false, false, false, false, false] } });
    const on = await roundTrip(a, out, { payload: { line: 3, value: true } });
    assert.equal(on.command, '#0AA301');
    const off = await roundTrip(a, out, { payload: { line: 0, value: 'off' } });
    assert.equal(off.command, '#0AA000');
    assert.deepEqual(outputs(), [false, true, false, true, false, false, false, false]);
  });

  it('keeps the node\'s own command, so an @AA reply passed on never sets outputs', async () => {
    await helper.load([deviceNode, asciiNode], flow(sim.port, { command: '@0A' }));
    const msg = await roundTrip(helper.getNode('a'), helper.getNode('out'), { payload: { outputs: new Array(8).fill(true) } });
    assert.equal(msg.command, '@0A');
    assert.equal(sim.device.outputs, 0);
  });

  const bad = [
    ['seven outputs', { outputs: [true, true, true, true, true, true, true] }, 'NINES_ERR_INVALID_ARG', 'msg.payload.outputs'],
    ['an output that is not on or off', { outputs: [true, false, 'maybe', false, false, false, false, false] }, 'NINES_ERR_INVALID_VALUE', 'msg.payload.outputs[2]'],
    ['a line past 15', { line: 16, value: true }, 'NINES_ERR_INVALID_ARG', 'msg.payload.line'],
    ['a fractional line', { line: 1.5, value: true }, 'NINES_ERR_INVALID_ARG', 'msg.payload.line'],
    ['a line without a value', { line: 2 }, 'NINES_ERR_INVALID_ARG', 'msg.payload.value'],
    ['a value that is not on or off', { line: 2, value: 'dim' }, 'NINES_ERR_INVALID_VALUE', 'msg.payload.value'],
    ['both outputs and a line', { outputs: new Array(8).fill(false), line: 1, value: true }, 'NINES_ERR_INVALID_ARG', 'msg.payload'],
    ['an @AA reply passed on', { outputs: new Array(8).fill(false), inputs: new Array(8).fill(true), value: 255 }, 'NINES_ERR_INVALID_ARG', 'msg.payload.inputs']
  ];
  for (const [what, payload, code, field] of bad) {
    it(`refuses ${what} (${code}, ${field}) and sends nothing`, async () => {
      await helper.load([deviceNode, asciiNode], flow(sim.port));
      const err = await expectError(helper.getNode('a'), { payload });
      assert.equal(err.code, code);
      assert.equal(err.details.field, field);
      assert.equal(sim.stats.requests, 0);
    });
  }
});
