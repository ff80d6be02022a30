'use strict';

/**
 * `nines probe --precision` and `nines sweep --precision` (issue 20): the setting reaches the
 * schedule and is reported with the run, the probe's own lateness is printed beside its figures,
 * and a bad value is refused naming the flag. No timing is asserted: how late each wait is shows
 * in `npm run bench` (question 15).
 */

const assert = require('node:assert/strict');
const { startChildSim } = require('../helpers/child-sim');
const { nines } = require('../helpers/nines-cli');

describe('nines probe and sweep: --precision spin | sleep', function () {
  this.timeout(60000);
  let sim;
  before(async () => { sim = await startChildSim('modbus'); });
  after(async () => { if (sim) await sim.stop(); });

  it('a fixed-rate probe spins by default and says so in its JSON', async () => {
    const r = await nines(['probe', sim.url, '--read', '3:0:10', '--rate', '200/s', '--count', '100', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const run = JSON.parse(r.stdout).runs[0];
    assert.equal(run.precision, 'spin');
    assert.equal(run.ok, 100);
    assert.ok(run.lag.count > 0, 'the dispatch lag of every send is recorded');
  });

  it('--precision sleep runs the same probe sleeping, and the table states the probe\'s own lateness', async () => {
    const r = await nines(['probe', sim.url, '--read', '3:0:10', '--rate', '200/s', '--count', '100', '--precision', 'sleep']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^1x the probe's own lateness \(dispatch lag, precision sleep\): p50 \d+\.\d{3}, p99 \d+\.\d{3}, max \d+\.\d{3} ms; CPU \d+\.\d % of a core$/m);
  });

  it('refuses an unknown precision, naming the flag, before opening a connection', async () => {
    const r = await nines(['probe', sim.url, '--read', '3:0:10', '--rate', '200/s', '--count', '10', '--precision', 'exact']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /--precision must be one of spin, sleep; got "exact"/);
  });

  it('runProbe and runSweep (the latency-probe node\'s and scripts\' way in) refuse a bad precision with field precision', () => {
    const { runProbe } = require('../../gateway/measure/probe');
    const { runSweep } = require('../../gateway/measure/sweep');
    const coded = (e) => e.code === 'NINES_ERR_INVALID_ARG' && e.details.field === 'precision';
    assert.throws(() => runProbe({ target: sim.url, read: '3:0:10', ratePerSec: 100, count: 1, precision: 'exact' }), coded);
    assert.throws(() => runSweep({ target: sim.url, read: '3:0:10', rates: [100], precision: 'busy' }), coded);
  });

  it('a sweep takes --precision and reports it per step; a bad one is refused naming the flag', async () => {
    const ok = await nines(['sweep', sim.url, '--read', '3:0:10', '--rates', '100,200', '--step', '300ms', '--workers', '1', '--precision', 'sleep', '--json']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(JSON.parse(ok.stdout).steps.map((s) => s.precision), ['sleep', 'sleep']);
    const bad = await nines(['sweep', sim.url, '--read', '3:0:10', '--rates', '100', '--precision', 'fast']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--precision must be one of spin, sleep/);
  });
});
