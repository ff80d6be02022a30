'use strict';

/**
 * `nines probe` and `nines sweep` say what happened besides the percentiles: a fixed rate the run
 * did not hold ("fell behind": table, JSON, exit status 3), and why requests failed (counts per
 * error code with a sample message). No timing luck: the device that cannot keep up is made slow
 * by the simulator's latency fault, so a busy machine only makes it slower still.
 */

const assert = require('node:assert/strict');
const { startChildSim } = require('../helpers/child-sim');
const { nines } = require('../helpers/nines-cli');

describe('nines probe: fixed rates held or marked, failures with their reasons', function () {
  this.timeout(60000);
  let slow; // ED-588 answering each request 10 ms late: at most 100 req/s on one connection
  let ed588;
  let ed560;
  before(async () => {
    [slow, ed588, ed560] = await Promise.all([
      startChildSim('ascii', ['--faults', 'latency=10ms']),
      startChildSim('ascii'),
      startChildSim('ascii', ['--model', 'ED-560'])
    ]);
  });
  after(async () => { await Promise.all([slow, ed588, ed560].filter(Boolean).map((s) => s.stop())); });

  it('marks a fixed rate the device cannot hold as fell behind, in the JSON and with exit status 3', async () => {
    const r = await nines(['probe', slow.url, '--command', '@01', '--rate', '300/s', '--count', '100', '--json']);
    assert.equal(r.code, 3, r.stderr);
    const run = JSON.parse(r.stdout).runs[0];
    assert.equal(run.offered, 300);
    assert.ok(run.ratePerSec < 0.95 * 300, `achieved ${run.ratePerSec}/s`);
    assert.equal(run.fellBehind, true);
    assert.equal(run.ok, 100, 'every request was answered: slow, not failing');
    assert.equal(run.thread, 'worker', 'a fixed rate runs in a worker thread by default');
  });

  it('says "fell behind" in the table, with the achieved and offered rates', async () => {
    const r = await nines(['probe', slow.url, '--command', '@01', '--rate', '300/s', '--count', '60']);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stdout, /^ED-588 @AA \(capped, 300\/s offered\)/m);
    assert.match(r.stdout, /\s+rate\n.*FELL BEHIND$/m);
    assert.match(r.stdout, /1x fell behind: achieved \d+\/s of 300\/s offered \(< 95 %\)/);
  });

  it('does not mark a fixed rate that was held, and exits 0', async () => {
    // 20/s for 2 s: a stall of up to ~150 ms near the end would still leave the run above 95 %
    const r = await nines(['probe', ed588.url, '--command', '@01', '--rate', '20/s', '--count', '40', '--json']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const run = JSON.parse(r.stdout).runs[0];
    assert.equal(run.fellBehind, false, `achieved ${run.ratePerSec}/s`);
    assert.equal(run.offered, 20);
    assert.equal(run.thread, 'worker');
  });

  it('runs on the main thread when asked, and in a worker for closed loop with --worker', async () => {
    const main = await nines(['probe', ed588.url, '--command', '@01', '--rate', '50/s', '--count', '5', '--main-thread', '--json']);
    assert.ok(main.code === 0 || main.code === 3, main.stderr);
    assert.equal(JSON.parse(main.stdout).runs[0].thread, 'main');
    const closed = await nines(['probe', ed588.url, '--command', '@01', '--count', '50', '--json']);
    assert.equal(closed.code, 0, closed.stderr);
    const run = JSON.parse(closed.stdout).runs[0];
    assert.equal(run.thread, 'main');
    assert.equal(run.offered, null);
    assert.equal(run.fellBehind, false, 'closed loop has no rate to hold');
    const worker = await nines(['probe', ed588.url, '--command', '@01', '--count', '50', '--worker', '--json']);
    assert.equal(JSON.parse(worker.stdout).runs[0].thread, 'worker');
    const both = await nines(['probe', ed588.url, '--command', '@01', '--worker', '--main-thread']);
    assert.equal(both.code, 1);
    assert.match(both.stderr, /--worker or --main-thread, not both/);
  });

  it('documents the exit statuses in --help', async () => {
    const r = await nines(['probe', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Exit status: 0 .*; 1 .*\n2 a run got no successful reply; 3 a fixed-rate run fell behind/);
  });

  it('gives every run its failures per error code with a sample message (#010 to an ED-560)', async () => {
    const j = await nines(['probe', ed560.url, '--command', '#010', '--count', '3', '--json']);
    assert.equal(j.code, 2, j.stderr);
    const run = JSON.parse(j.stdout).runs[0];
    assert.equal(run.errors, 3);
    assert.deepEqual(Object.keys(run.errorsByCode), ['NINES_ERR_DEVICE_INVALID']);
    assert.equal(run.errorsByCode.NINES_ERR_DEVICE_INVALID.count, 3);
    assert.match(run.errorsByCode.NINES_ERR_DEVICE_INVALID.sample, /#010 was refused by the device: "\?01"/);
    const t = await nines(['probe', ed560.url, '--command', '#010', '--count', '3']);
    assert.equal(t.code, 2);
    assert.match(t.stdout, /1x failures by code:\n {2}3 × NINES_ERR_DEVICE_INVALID, e\.g\. #010 was refused by the device: "\?01"/);
    const ok = await nines(['probe', ed560.url, '--command', '$01M', '--count', '20', '--json']);
    assert.deepEqual(JSON.parse(ok.stdout).runs[0].errorsByCode, {}, 'no failures, an empty record');
  });

  it('counts timeouts by their code too', async () => {
    const r = await nines(['probe', ed588.url, '--command', '@02', '--count', '2', '--timeout', '100ms', '--json']);
    assert.equal(r.code, 2, r.stderr);
    const run = JSON.parse(r.stdout).runs[0];
    assert.equal(run.timeouts, 2, 'a wrong address gets silence');
    assert.equal(run.errorsByCode.NINES_ERR_REPLY_TIMEOUT.count, 2);
    assert.match(run.errorsByCode.NINES_ERR_REPLY_TIMEOUT.sample, /@02/);
  });

  it('refuses a generator the device\'s model refuses (#AA1N0F to an ED-588), before the run', async () => {
    const r = await nines(['probe', ed588.url, '--generator', '#AA1N0F', '--count', '1000']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /NINES_ERR_INVALID_ARG: generator #AA1N0F is for ED-560, but .* is an ED-588 .*; for an ED-588 use @AA, @AA\(Data\), #AAN/);
    assert.equal(r.stdout, '');
  });

  it('runs the vendor generators against the models they are for without a single error', async () => {
    for (const [sim, gens] of [[() => ed588, ['@AA', '@AA(Data)', '#AAN']], [() => ed560, ['#AA1N0F', '#AA1NVVData']]]) {
      for (const g of gens) {
        const r = await nines(['probe', sim().url, '--generator', g, '--count', '300', '--json']);
        assert.equal(r.code, 0, `${g}: ${r.stderr}`);
        const run = JSON.parse(r.stdout).runs[0];
        assert.equal(run.ok, 300, `${g}: ${JSON.stringify(run.errorsByCode)}`);
      }
    }
  });

  it('records a timeout in closed loop as no shorter than the timeout, though the next request waits for a fresh connection first (issue 21)', async () => {
    // @02 to an ED-588 at address 01: silence, so every request times out, and after each the ASCII
    // client reconnects before writing the next (a 50 ms drain first)
    const r = await nines(['probe', ed588.url, '--command', '@02', '--count', '4', '--timeout', '200ms', '--json']);
    const run = JSON.parse(r.stdout).runs[0];
    assert.equal(run.timeouts, 4, r.stdout);
    assert.ok(run.summary.min >= 200, `min ${run.summary.min} ms at a 200 ms timeout`);
  });

  it('gives every sweep step its failures per error code', async () => {
    const r = await nines(['sweep', ed560.url, '--command', '#010', '--rates', '20', '--step', '300ms', '--workers', '1', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const [step] = JSON.parse(r.stdout).steps;
    assert.ok(step.errors > 0, `${step.errors} errors`);
    assert.equal(step.errorsByCode.NINES_ERR_DEVICE_INVALID.count, step.errors);
    assert.match(step.errorsByCode.NINES_ERR_DEVICE_INVALID.sample, /#010 was refused/);
    const t = await nines(['sweep', ed560.url, '--command', '#010', '--rates', '20', '--step', '300ms', '--workers', '1']);
    assert.match(t.stdout, /\n {11}\d+ × NINES_ERR_DEVICE_INVALID, e\.g\. #010 was refused/);
  });
});
