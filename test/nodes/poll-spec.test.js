'use strict';

/**
 * nines-poll's settings → job spec (nodes/lib/poll-spec.js), without a runtime: the rate field
 * takes the forms the dialog's hint names.
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

  it('polls at 10/s when the rate is left empty', () => {
    assert.equal(pollSettings(RED, config(''), 'p').spec.ratePerSec, 10);
  });

  it('refuses a rate it cannot read with a coded error naming the forms it takes', () => {
    for (const rate of ['fast', '0ms', '10Hz/s', '-5/s']) {
      assert.throws(() => pollSettings(RED, config(rate), 'p'), (e) => e.code === 'NINES_ERR_INVALID_ARG' &&
        /^rate must be "max" or a positive rate .*"10Hz".*"100ms"/.test(e.message), rate);
    }
  });
});
