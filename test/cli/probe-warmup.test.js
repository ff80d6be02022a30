'use strict';

// The probe's warm-up (issue 11): closed loop, it is the first requests of the measured schedule
// itself, on the same connection, left out of every figure; at a fixed rate, a closed loop before it.

const assert = require('node:assert/strict');
const { runProbe } = require('../../gateway/measure/probe');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');

describe('nines probe: the warm-up', function () {
  this.timeout(20000);
  let sim;
  before(async () => { sim = await createModbusTcpSimulator({ port: 0 }); });
  after(async () => { await sim.close(); });

  const probe = (o) => runProbe({ target: sim.url, read: '3:0:10', connections: [1], timeoutMs: 1000, ...o });

  it('closed loop: the warm-up\'s requests run first on the run\'s own connection and stay out of its figures', async () => {
    const before = sim.stats.requests;
    const seen = [];
    const p = probe({ count: 300, warmup: 200 });
    p.on('progress', (x) => seen.push(x.done));
    const { runs } = await p.promise;
    const r = runs[0];
    assert.equal(sim.stats.requests - before, 500, 'warm-up and count, once each');
    assert.equal(r.count, 300);
    assert.equal(r.ok, 300);
    assert.equal(r.summary.count, 300, 'the histogram holds the measured requests only');
    assert.equal(seen[0], 0, 'the first progress report comes as the measured part starts');
  });

  it('at a fixed rate the warm-up is a closed loop first: it does not take warmup / rate seconds', async () => {
    const t0 = Date.now();
    const { runs } = await probe({ count: 20, warmup: 500, ratePerSec: 200, inWorker: false }).promise;
    assert.equal(runs[0].ok, 20);
    assert.ok(Date.now() - t0 < 2000, `took ${Date.now() - t0} ms`);
  });
});
