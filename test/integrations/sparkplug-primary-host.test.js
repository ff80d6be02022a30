'use strict';

/**
 * The gateway as a Sparkplug B edge node with a primary host (mqtt.sparkplug.primaryHost), checked
 * by an independent host in another process (test/helpers/sparkplug-host.js) through a real
 * Mosquitto: STATE gating, store and forward with is_historical, aliases resolved from the births
 * alone, template instances that resolve. The 30-second run is in test/long/.
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startMosquitto } = require('../helpers/mosquitto');
const { runOfflineScenario } = require('../helpers/sparkplug-offline');

describe('Sparkplug B with a primary host: STATE, store and forward, aliases, templates', function () {
  this.timeout(60000);
  let mosq;
  before(async () => { mosq = await startMosquitto(); });
  after(async () => { if (mosq) await mosq.stop(); });

  // 3 s offline: 300 values held in memory, far below any hold limit, as 5 s gave 500; every
  // assertion of the scenario scales with the time offline (test/long/ holds 30 s)
  it('host offline 3 s at 100 values/s: after it returns every held value arrives once, in order, historical; nothing before NBIRTH', async () => {
    const r = await runOfflineScenario({ mosq, offlineMs: 3000, ratePerSec: 100 });
    assert.equal(r.dropped, 0);
  });

  it('holds on disk beside mqtt.spool, in the same order', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-sp-spool-'));
    try {
      const r = await runOfflineScenario({ mosq, offlineMs: 2000, ratePerSec: 100, spool: { dir } });
      assert.equal(r.dropped, 0);
      assert.ok(fs.existsSync(path.join(dir, 'sparkplug', 'aliases.json')));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
