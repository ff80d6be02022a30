'use strict';

/**
 * nines-poll's settings → job spec (nodes/lib/poll-spec.js), without a runtime: the rate field
 * takes the forms the dialog's hint names; a tag list becomes a tag job with its planned reads.
 */

const assert = require('node:assert/strict');
const { pollSettings } = require('../../nodes/lib/poll-spec');
const { asciiDevice } = require('../../nodes/lib/device-config');

/** A RED with one ASCII device config node, as pickDevice finds it */
function fakeRed () {
  const { spec, target, timeoutMs } = asciiDevice({ host: '127.0.0.1', port: 9500, address: '01' }, 'ad');
  const device = { spec, target: target.url, timeoutMs, configError: null };
  return { nodes: { getNode: (id) => (id === 'ad' ? device : null) } };
}

const config = (rate) => ({ protocol: 'ascii', asciiDevice: 'ad', command: '@01', rate, interval: 10, values: 'on-change' });

describe('nines-poll settings', () => {
  const RED = fakeRed();

  it('takes the rate per second, per minute, in Hz or as a period between polls', () => {
    const cases = [['10/s', 10], ['10Hz', 10], ['10 Hz', 10], ['1kHz', 1000], ['100ms', 10], ['2s', 0.5], ['1000/min', 1000 / 60], ['25', 25], ['max', Infinity]];
    for (const [rate, perSec] of cases) {
      assert.equal(pollSettings(RED, config(rate), 'p').spec.ratePerSec, perSec, rate);
    }
  });

  it('sleeps to each poll unless told to spin (precision), and refuses another wait naming the field', () => {
    assert.equal(pollSettings(RED, config('10/s'), 'p').spec.precision, 'sleep');
    assert.equal(pollSettings(RED, { ...config('10/s'), precision: '' }, 'p').spec.precision, 'sleep');
    assert.equal(pollSettings(RED, { ...config('10/s'), precision: 'spin' }, 'p').spec.precision, 'spin');
    assert.throws(() => pollSettings(RED, { ...config('10/s'), precision: 'exact' }, 'p'),
      (e) => e.code === 'NINES_ERR_INVALID_ARG' && /precision must be one of spin, sleep/.test(e.message));
  });

  it('polls at 10/s when the rate is left empty', () => {
    assert.equal(pollSettings(RED, config(''), 'p').spec.ratePerSec, 10);
  });

  it('refuses a rate it cannot read with a coded error naming the forms it takes', () => {
    for (const rate of ['fast', '0ms', '10Hz/s', '-5/s']) {
      assert.throws(() => pollSettings(RED, config(rate), 'p'), (e) => e.code === 'NINES_ERR_INVALID_ARG' &&
        /^rate must be "max" or a positive rate .*"10Hz".*"100ms"/.test(e.message), rate);
    }
  });

  it('makes a tag job of a tag list, a scale typed as text read as a number, with the units of the tags', () => {
    const tags = [
      { name: 'door', table: 'input', address: 0, unit: '' },
      { name: 'pulses', table: 'counter', address: 2, scale: '0.5', unit: 'l' }
    ];
    const s = pollSettings(RED, { ...config('10/s'), source: 'tags', tags }, 'p');
    assert.equal(s.spec.kind, 'tags');
    assert.deepEqual(s.spec.tags.map((t) => [t.name, t.address, t.scale]), [['door', 0, 1], ['pulses', 2, 0.5]]);
    // the lines in one @01, the counter in one #012
    assert.deepEqual(s.spec.plan.map((b) => b.command), ['@01', '#012']);
    assert.deepEqual(s.units, { pulses: 'l' });
    assert.equal(s.spec.decode, null, 'tags are decoded per tag, not by the node\'s type');
  });

  it('keeps a node without a source on its one request, whatever tags it holds', () => {
    const s = pollSettings(RED, { ...config('10/s'), tags: [{ name: 'x' }] }, 'p');
    assert.equal(s.spec.kind, 'command');
    assert.equal(s.units, null);
  });

  it('refuses a tag list with every problem, the first field named', () => {
    const tags = [{ name: 'a', table: 'input', address: 8 }, { name: 'a', table: 'holding', address: 0 }];
    assert.throws(() => pollSettings(RED, { ...config('10/s'), source: 'tags', tags }, 'p'), (e) => e.code === 'NINES_ERR_INVALID_ARG' &&
      e.details.field === 'tags[0].address' && e.details.problems.length === 2 && /2 problems in tags/.test(e.message));
  });
});

describe('nines-poll on a Modbus device: the unit it asks', () => {
  /** A RED with one Modbus device config node (unit id 1), as pickDevice finds it */
  function modbusRed (extra = {}) {
    const { modbusDevice } = require('../../nodes/lib/device-config');
    const { spec, target, timeoutMs } = modbusDevice({ transport: 'tcp', host: '127.0.0.1', port: 5020, unitId: 1, ...extra }, 'md');
    const device = { spec, target: target.url, timeoutMs, configError: null };
    return { nodes: { getNode: (id) => (id === 'md' ? device : null) } };
  }
  const poll = (unitId) => ({ protocol: 'modbus', modbusDevice: 'md', fc: 3, address: 0, quantity: 1, unitId, rate: '1/s', interval: 10, values: 'on-change' });

  it('a poll of unit 5 on a device of unit 1 carries unit 5\'s target, in the URL its summaries name too', () => {
    const { spec, unitId } = pollSettings(modbusRed(), poll(5), 'p');
    assert.equal(unitId, 5);
    assert.equal(spec.target.unitId, 5);
    assert.match(spec.target.url, /\?unitId=5$/);
  });

  it('on a line of units, the poll names the unit of its id', () => {
    const { spec } = pollSettings(modbusRed({ units: '1-5' }), poll(5), 'p');
    assert.equal(spec.unit, 'unit-5');
    assert.match(spec.target.url, /\?unitId=5$/);
  });
});
