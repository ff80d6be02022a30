'use strict';

// The probe's warm-up (issue 11): closed loop, it is the first requests of the measured schedule
// itself, on the same connection, left out of every figure; at a fixed rate, a closed loop before
// it and then at most a second of the paced schedule itself (its waits compiled before measuring).

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

  it('at a fixed rate the warm-up is a closed loop, then at most a second of the paced schedule: never warmup / rate seconds, and out of the figures', async () => {
    const before = sim.stats.requests;
    const t0 = Date.now();
    const { runs } = await probe({ count: 20, warmup: 500, ratePerSec: 200, inWorker: false }).promise;
    const took = Date.now() - t0;
    assert.equal(sim.stats.requests - before, 500 + 200 + 20, 'the closed loop, one second at 200/s, then the count');
    assert.equal(runs[0].ok, 20);
    assert.equal(runs[0].summary.count, 20, 'the histogram holds the measured requests only');
    // 220 paced requests at 200/s are never sent before their time: at least 1.095 s; the 500 of
    // the warm-up at that rate would have taken 2.5 s more
    assert.ok(took >= 1095 && took < 2500, `took ${took} ms`);
  });
});
