'use strict';

/**
 * After an outage a poll behaves like a plant tool, not a replay: the device never sees more than
 * 1.1× the configured rate in any 1 s window, the device's health turns up at once, and values
 * are back within the backoff max + 1 s. The 25 s outage of the issue runs in test/long; here the
 * device is away 3 s, long enough for several reconnect attempts and a backlog to have built up.
 */

const assert = require('node:assert/strict');
const { runOutage } = require('../helpers/outage');

describe('outage: a device away and back', function () {
  this.timeout(30000);

  for (const ratePerSec of [10, 1000]) {
    it(`at ${ratePerSec}/s: no catch-up flood, health up at once, values back within backoff max + 1 s`, async () => {
      // 2 s away: the backoff (100 ms doubling, equal jitter) is at its 1 s maximum by then, and a
      // catch-up of the missed slots (20 at 10/s, 2,000 at 1000/s) would put far more than the 1.1×
      // rate the window allows into one second; test/long/ keeps the 25 s outage
      const r = await runOutage({ ratePerSec, downMs: 2000, afterMs: 3000 });
      const msg = JSON.stringify({ maxWindow: r.maxWindow, upAfterMs: r.upAfterMs, valuesAfterMs: r.valuesAfterMs, firstReplyAfterMs: r.firstReplyAfterMs });
      assert.ok(r.sawDown, `the device was reported down; ${msg}`);
      assert.ok(r.maxWindow <= 1.1 * ratePerSec, `a 1 s window after recovery had ${r.maxWindow} requests at ${ratePerSec}/s; ${msg}`);
      assert.notEqual(r.upAfterMs, null, msg);
      assert.ok(r.upAfterFirstReplyMs <= 1000, `health up ${r.upAfterFirstReplyMs} ms after the first good reply; ${msg}`);
      assert.ok(r.valuesAfterMs !== null && r.valuesAfterMs <= r.backoffMaxMs + 1000, msg);
      // every intended slot is in a summary: sent, skipped or failed
      const down = r.summaries.reduce((a, p) => a + p.errors + p.timeouts, 0);
      assert.ok(down > 0, 'the outage shows as failed requests');
      for (const p of r.summaries) assert.equal(p.policy, 'skip');
    });
  }
});
