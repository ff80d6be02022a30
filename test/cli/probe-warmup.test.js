'use strict';

// The probe's warm-up (issue 11): closed loop, it is the first requests of the measured schedule
// itself, on the same connection, left out of every figure; at a fixed rate, a closed loop before
// it and then part of the paced schedule itself (its waits compiled before measuring, issue 20):
// at least a second, and at least 10,000 requests while they take at most 5 s.

const assert = require('node:assert/strict');
const { runProbe, pacedWarmup } = require('../../gateway/measure/probe');
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

  it('the paced part: at least a second, at least 10,000 requests while they take at most 5 s, never more than asked', () => {
    assert.equal(pacedWarmup(30000, 100), 500, '100/s: 5 s');
    assert.equal(pacedWarmup(30000, 1000), 5000, '1,000/s: 5 s');
    assert.equal(pacedWarmup(30000, 10000), 10000, '10,000/s: 10,000 requests');
    assert.equal(pacedWarmup(50000, 36800), 36800, 'above 10,000/s: a second');
    assert.equal(pacedWarmup(30000, 36800), 30000, 'never more than asked');
    assert.equal(pacedWarmup(5000, 10000), 5000);
    assert.equal(pacedWarmup(0, 1000), 0);
  });

  it('at a fixed rate the warm-up is a closed loop, then its paced part: out of the figures, and only the paced part at the rate', async () => {
    const before = sim.stats.requests;
    const t0 = Date.now();
    const { runs } = await probe({ count: 20, warmup: 300, ratePerSec: 200, inWorker: false }).promise;
    const took = Date.now() - t0;
    const paced = pacedWarmup(300, 200);
    assert.equal(paced, 300);
    assert.equal(sim.stats.requests - before, 300 + paced + 20, 'the closed loop, the paced part, then the count');
    assert.equal(runs[0].ok, 20);
    assert.equal(runs[0].summary.count, 20, 'the histogram holds the measured requests only');
    // 320 paced requests at 200/s are never sent before their time: at least 1.595 s; had the
    // closed loop been paced too, 1.5 s more
    assert.ok(took >= 1595 && took < 2900, `took ${took} ms`);
  });
});
