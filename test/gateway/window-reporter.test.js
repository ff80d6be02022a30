'use strict';

const assert = require('node:assert/strict');
const { WindowReporter } = require('../../gateway/base/window-reporter');
const { Job } = require('../../gateway/jobs/job');
const { buildJobSpec } = require('../../gateway/jobs/spec');
const { parseTarget } = require('../../gateway/drivers/target');
const { NinesError } = require('../../gateway/base/errors');

/** A reporter on a hand-driven clock; its timers are real but short */
function setup (opts = {}) {
  let t = 0;
  const out = [];
  const reporter = new WindowReporter({ windowMs: 20, emit: (k, v, held) => out.push([k, v, held]), now: () => t, ...opts });
  return { reporter, out, advance: (ms) => { t += ms; } };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe('gateway/base/window-reporter: one report per key per window, with a count of the rest', () => {
  it('sends the first item at once and, when the window ends, the latest of a burst with how many it stands for', async () => {
    const { reporter, out } = setup();
    assert.equal(reporter.offer('a', 1), true);
    for (let v = 2; v <= 100; v++) assert.equal(reporter.offer('a', v), false);
    assert.deepEqual(out, [['a', 1, 0]]);
    await sleep(40);
    assert.deepEqual(out, [['a', 1, 0], ['a', 100, 99]]);
    assert.equal(reporter.coalesced, 98);
    reporter.clear();
  });

  it('sends nothing more at the end of a window in which nothing came', async () => {
    const { reporter, out } = setup();
    reporter.offer('a', 1);
    await sleep(40);
    assert.deepEqual(out, [['a', 1, 0]]);
  });

  it('keeps a window per key', () => {
    const { reporter, out } = setup();
    reporter.offer('a', 1);
    reporter.offer('b', 1);
    reporter.offer('a', 2);
    assert.deepEqual(out, [['a', 1, 0], ['b', 1, 0]]);
    reporter.clear();
  });

  it('sends at once again once the window has passed', () => {
    const { reporter, out, advance } = setup();
    reporter.offer('a', 1);
    advance(20);
    assert.equal(reporter.offer('a', 2), true);
    assert.deepEqual(out, [['a', 1, 0], ['a', 2, 0]]);
  });

  it('merges items with a merge function instead of replacing them, and still counts them', () => {
    const { reporter, out } = setup({ merge: (a, b) => a + b });
    reporter.offer('a', 1);
    reporter.offer('a', 2);
    reporter.offer('a', 3);
    reporter.flush();
    assert.deepEqual(out, [['a', 1, 0], ['a', 5, 2]]);
    assert.equal(reporter.coalesced, 1, 'only the second held item was merged into another');
  });

  it('flush() sends what is held and opens the next window; clear() forgets it uncounted', () => {
    const { reporter, out } = setup();
    reporter.offer('a', 1);
    reporter.offer('a', 2);
    reporter.flush();
    assert.equal(reporter.offer('a', 3), false, 'the flush opened a new window');
    reporter.clear();
    assert.deepEqual(out, [['a', 1, 0], ['a', 2, 1]]);
    assert.equal(reporter.offer('a', 4), true, 'clear() closed every window');
  });

  it('a per-call window overrides the default, and 0 lets everything through', () => {
    const { reporter, out, advance } = setup();
    reporter.offer('a', 1, 1000);
    advance(500);
    assert.equal(reporter.offer('a', 2, 1000), false);
    reporter.clear();
    assert.deepEqual(out, [['a', 1, 0]]);
    for (let v = 1; v <= 3; v++) assert.equal(reporter.offer('b', v, 0), true);
  });

  describe('without a window length (windows end at flush(), as a job ends its intervals)', () => {
    it('holds everything after the first until flush(), then closes a window that held nothing', async () => {
      const { reporter, out, advance } = setup({ windowMs: Infinity });
      reporter.offer('a', 1);
      advance(1e9);
      reporter.offer('a', 2);
      reporter.offer('a', 3);
      await sleep(20);
      assert.deepEqual(out, [['a', 1, 0]], 'no timer ends this window');
      reporter.flush();
      assert.deepEqual(out, [['a', 1, 0], ['a', 3, 2]]);
      assert.equal(reporter.offer('a', 4), false, 'the window the flush opened still holds');
      reporter.flush();
      reporter.flush();
      assert.equal(reporter.offer('a', 5), true, 'a window that ended with nothing held closed');
      assert.deepEqual(out, [['a', 1, 0], ['a', 3, 2], ['a', 4, 1], ['a', 5, 0]]);
    });
  });
});

describe('a job\'s failures through the one reporter', () => {
  /** A job that is never started: only its error reporting is used */
  function job () {
    const device = { name: 'ed588', target: parseTarget('ascii://127.0.0.1:9500'), maxConnections: 1 };
    const j = new Job(buildJobSpec({ name: 'p', command: '@01', ratePerSec: 10 }, { device }), { device: null });
    const reports = [];
    j.on('job-error', (e) => reports.push({ code: e.code, message: e.message, details: e.details }));
    return { j, reports };
  }

  it('reports a code\'s first failure at once and its repeats once at the end of the interval, with their count and times', () => {
    const { j, reports } = job();
    j.reportError(new NinesError('NINES_ERR_REPLY_TIMEOUT', 'no reply 1'));
    j.reportError(new NinesError('NINES_ERR_CONNECT_FAILED', 'refused'));
    for (let i = 2; i <= 5; i++) j.reportError(new NinesError('NINES_ERR_REPLY_TIMEOUT', `no reply ${i}`));
    assert.deepEqual(reports.map((r) => r.message), ['no reply 1', 'refused']);
    assert.equal(reports[0].details, undefined);
    j.flushErrors();
    assert.equal(reports.length, 3, 'one more report, for the code that failed again');
    const r = reports[2];
    assert.equal(r.code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.equal(r.message, 'no reply 5', 'the newest error speaks for them');
    assert.equal(r.details.repeated, 4);
    assert.ok(Date.parse(r.details.firstAt) <= Date.parse(r.details.lastAt));
    // quiet for an interval: the next failure of the code is reported at once again
    j.flushErrors();
    j.flushErrors();
    j.reportError(new NinesError('NINES_ERR_REPLY_TIMEOUT', 'no reply 6'));
    assert.equal(reports.length, 4);
    assert.equal(reports[3].details, undefined);
  });
});
