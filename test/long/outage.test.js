'use strict';

/**
 * The devices issue's outage, at its full length: a device down 25 s, polled at 10/s and at 1 kHz.
 * After recovery no 1 s window above 1.1× the configured rate, status up within 1 s of the first
 * good reply, values back within the backoff max + 1 s. (`npm run test:long`)
 */

const assert = require('node:assert/strict');
const { runOutage } = require('../helpers/outage');

describe('outage (long): a device down 25 s', function () {
  this.timeout(120000);
  for (const ratePerSec of [10, 1000]) {
    for (const policy of ['skip', 'capped']) {
      it(`at ${ratePerSec}/s with ${policy}: no flood, up at once, values back in time`, async () => {
        const r = await runOutage({ ratePerSec, policy, downMs: 25000, afterMs: 10000, backoff: { initialMs: 100, maxMs: 10000 } });
        const msg = JSON.stringify({ maxWindow: r.maxWindow, upAfterFirstReplyMs: r.upAfterFirstReplyMs, valuesAfterMs: r.valuesAfterMs });
        console.log(`      ${ratePerSec}/s ${policy}: ${msg}`);
        assert.ok(r.maxWindow <= 1.1 * ratePerSec, msg);
        assert.ok(r.upAfterFirstReplyMs !== null && r.upAfterFirstReplyMs <= 1000, msg);
        assert.ok(r.valuesAfterMs !== null && r.valuesAfterMs <= r.backoffMaxMs + 1000, msg);
      });
    }
  }
});
