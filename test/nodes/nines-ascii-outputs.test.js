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
  it('refuses a line past the module\'s outputs ({line: 9} to an ED-588), asking its model first and setting nothing (issue 21)', async () => {
    await helper.load([deviceNode, asciiNode], flow(sim.port));
    const before = sim.device.outputs;
    const err = await expectError(helper.getNode('a'), { payload: { line: 9, value: true } });
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.equal(err.details.field, 'msg.payload.line');
    assert.match(err.message, /line 9 is past the outputs of this ED-588: it has lines 0-7/);
    // one request: the model ($0AM), never the write
    assert.equal(sim.stats.requests, 1);
    assert.equal(sim.device.outputs, before);
    // a line it has still goes
    const ok = await roundTrip(helper.getNode('a'), helper.getNode('out'), { payload: { line: 7, value: true } });
    assert.equal(ok.command, '#0AA701');
    assert.equal((sim.device.outputs >> 7) & 1, 1);
  });

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

describe('outputs as data against the module\'s model (checkOutputsOf)', () => {
  const { checkOutputsOf } = require('../../nodes/lib/ascii-outputs');
  const refused = (payload, model) => { try { checkOutputsOf(payload, model); return null; } catch (err) { return err.details.field; } };

  it('lets through what the model has, and what an unknown or unchecked model asks', () => {
    assert.equal(refused({ line: 15, value: true }, 'ED-527'), null);
    assert.equal(refused({ line: 7, value: true }, 'ED-588'), null);
    assert.equal(refused({ line: 12, value: true }, null), null);
    assert.equal(refused({ line: 12, value: true }, 'MY-MODULE'), null);
    assert.equal(refused({ line: 3, value: true }, 'ED-538'), null);
  });

  it('refuses lines a model lacks, and any output of a module that has none', () => {
    assert.equal(refused({ line: 8, value: false }, 'ED-588'), 'msg.payload.line');
    assert.equal(refused({ line: 16, value: true }, 'ED-527'), 'msg.payload.line');
    assert.equal(refused({ line: 0, value: true }, 'ED-560'), 'msg.payload.line');
    assert.equal(refused({ outputs: new Array(8).fill(false) }, 'ED-549'), 'msg.payload.outputs');
  });
});
