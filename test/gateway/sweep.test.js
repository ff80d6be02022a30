'use strict';

/**
 * The offered-load sweep finds a saturation point we can predict from the simulator's settings:
 * a device that takes 5 ms per request on one connection serves at most 200 requests/s.
 */

const assert = require('node:assert/strict');
const { runSweep, saturationIndex } = require('../../gateway/measure/sweep');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');

describe('offered-load sweep', function () {
  this.timeout(30000);

  it('finds the saturation point of a 5 ms device on one connection between 60/s and 400/s', async () => {
    const sim = await createAsciiSimulator({ port: 0, faults: 'latency=5ms' });
    try {
      const result = await runSweep({ target: sim.url, command: '@01', rates: [30, 60, 400, 800], stepMs: 800, workers: 1, timeoutMs: 2000 }).promise;
      assert.equal(result.steps.length, 4);
      // capacity is at most 1 / 5 ms = 200/s: the first saturated step is 400/s
      assert.ok(result.saturation, 'saturation found');
      assert.equal(result.saturation.offered, 400, result.steps.map((s) => `${s.offered}:${s.achieved.toFixed(0)} p99 ${s.p99}`).join(', '));
      assert.equal(result.below.offered, 60);
      assert.ok(result.saturation.achieved <= 210, `achieved ${result.saturation.achieved}`);
      // below saturation the offered rate is held; above, the backlog shows in the response time
      for (const s of result.steps.slice(0, 2)) assert.ok(s.achieved >= 0.95 * s.offered, `${s.offered}/s achieved ${s.achieved}`);
      assert.ok(result.steps[3].p99 > 10 * result.steps[0].p99, 'queueing shows from the intended send time');
      assert.ok(result.steps[3].unsent > 0, 'requests that could not be sent are reported');
    } finally {
      await sim.close();
    }
  });

  it('saturationIndex applies both rules and ignores noise below the floor', () => {
    const step = (offered, achieved, p99) => ({ offered, achieved, p99 });
    assert.equal(saturationIndex([step(100, 100, 1), step(200, 199, 1.1), step(400, 300, 5)]), 2);
    assert.equal(saturationIndex([step(100, 100, 1), step(200, 200, 3)]), 1, 'p99 tripled');
    assert.equal(saturationIndex([step(100, 100, 0.02), step(200, 200, 0.05)]), -1, 'a 30 µs rise is noise');
    assert.equal(saturationIndex([]), -1);
  });
});
