'use strict';

/**
 * Issue 22's store-and-forward run at full length: the primary host offline for 30 s while the
 * gateway reads 100 values a second; after it returns, every held value arrives once, in order,
 * marked historical, checked by the independent host (test/helpers/sparkplug-offline.js).
 */

const assert = require('node:assert/strict');
const { startMosquitto } = require('../helpers/mosquitto');
const { runOfflineScenario } = require('../helpers/sparkplug-offline');

describe('Sparkplug B store and forward: primary host offline 30 s at 100 values/s', function () {
  this.timeout(120000);
  let mosq;
  before(async () => { mosq = await startMosquitto(); });
  after(async () => { if (mosq) await mosq.stop(); });

  it('every held value arrives once, in order, historical, after the births; none dropped', async () => {
    const r = await runOfflineScenario({ mosq, offlineMs: 30000, ratePerSec: 100 });
    assert.equal(r.dropped, 0);
    assert.ok(r.held >= 2100, `${r.held} held values`);
  });
});
