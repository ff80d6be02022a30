'use strict';

/**
 * A job on a unit of a line says which unit it polled: the config check builds its spec with the
 * unit's own target (devices/line.js unitTarget), and the summary the gateway publishes carries
 * that target, not the line's (issue 19: unit 5's summaries said `?unitId=1`).
 */

const assert = require('node:assert/strict');
const { validateConfig } = require('../../gateway/runtime/config');
const { Gateway } = require('../../gateway/runtime/gateway');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');

const unitOf = (url) => new URLSearchParams(url.split('?')[1]).get('unitId');

describe('a unit job\'s summary names its own unit', function () {
  this.timeout(20000);
  let sim, gw;
  afterEach(async () => {
    if (gw) await gw.stop();
    if (sim) await sim.close();
    sim = gw = null;
  });

  it('from the config through the specs to the published summary: unit 5\'s target ends ?unitId=5, unit 1\'s ?unitId=1', async () => {
    sim = await createModbusTcpSimulator({ port: 0, modelOptions: { unitIds: [1, 5] } });
    // the line's own URL names unit 1: a job on unit 5 must not inherit it
    const config = validateConfig({
      gateway: { id: 'units', interval: '200ms', mode: 'inline' },
      mqtt: { embedded: { port: 0 } },
      devices: { gw: { target: `${sim.url.split('?')[0]}?unitId=1`, units: { m1: { unitId: 1 }, m5: { unitId: 5 } } } },
      jobs: [
        { name: 'five', device: 'gw', unit: 'm5', read: { fc: 3, address: 0, quantity: 1 }, rate: '20/s' },
        { name: 'one', device: 'gw', unit: 'm1', read: { fc: 3, address: 0, quantity: 1 }, rate: '20/s' }
      ]
    }, { env: {} });
    // the specs that run are the config's
    assert.deepEqual(config.jobs.map((j) => [j.name, j.unit, j.target.unitId, unitOf(j.target.url)]), [['five', 'm5', 5, '5'], ['one', 'm1', 1, '1']]);

    gw = new Gateway(config);
    const summaries = new Map();
    gw.on('summary', (job, payload) => { if (payload.ok > 0 && !summaries.has(job)) summaries.set(job, payload); });
    await gw.start();
    const end = Date.now() + 10000;
    while (summaries.size < 2 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(summaries.size, 2, 'a summary with answered polls from each job');
    assert.match(summaries.get('five').target, /\?unitId=5$/);
    assert.match(summaries.get('one').target, /\?unitId=1$/);
    // and the requests went to the units named: each unit answered its own job's polls
    assert.equal(summaries.get('five').errors, 0);
  });
});
