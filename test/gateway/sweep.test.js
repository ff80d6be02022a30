'use strict';

/**
 * The offered-load sweep finds a saturation point we can predict from the simulator's settings:
 * a device that takes 5 ms per request on one connection serves at most 200 requests/s.
 *
 * The device runs in its own process, so this process's work cannot stretch its 5 ms. What the
 * test asserts holds on a loaded machine too (another copy of the suite on the same cores): the
 * physical bounds of a 5 ms device, and that a step is called saturated only when its own numbers
 * say so (the rule's cases are in sweep-rule.test.js).
 */

const assert = require('node:assert/strict');
const { runSweep, utilisation } = require('../../gateway/measure/sweep');
const { startChildSim } = require('../helpers/child-sim');

const SERVICE_MS = 5;

describe('offered-load sweep', function () {
  this.timeout(30000);
  let sim;
  before(async () => { sim = await startChildSim('ascii', ['--faults', `latency=${SERVICE_MS}ms`]); });
  after(async () => { if (sim) await sim.stop(); });

  it('finds the saturation point of a 5 ms device on one connection at 400/s, where 200/s is passed', async () => {
    const result = await runSweep({ target: sim.url, command: '@01', rates: [30, 60, 400, 800], stepMs: 500, workers: 1, timeoutMs: 2000 }).promise;
    const { steps } = result;
    const show = steps.map((s) => `${s.offered}:${s.achieved.toFixed(0)} p99 ${s.p99} svc p50 ${s.service.p50}`).join(', ');
    assert.equal(steps.length, 4);
    assert.ok(result.saturation, `saturation found: ${show}`);
    const idx = steps.indexOf(result.saturation);

    // Above 200/s the device cannot keep up, whatever the machine does: 400/s and 800/s are saturated
    for (const s of steps.slice(2)) {
      assert.ok(s.achieved < 0.95 * s.offered, `${s.offered}/s cannot be held by a 5 ms device: ${show}`);
      assert.ok(s.achieved <= 1000 / SERVICE_MS * 1.05, `achieved ${s.achieved} at most 200/s`);
    }
    assert.ok(idx <= 2, show);
    // Below it, a step that held its rate and kept the device under half busy is never saturated:
    // so on any machine that let 30/s and 60/s through, the point is 400/s
    const quiet = (s) => s.achieved >= 0.95 * s.offered && utilisation(s) < 0.5;
    if (steps.slice(0, 2).every(quiet)) assert.equal(result.saturation.offered, 400, show);
    // Whatever it is, the steps before it held their rate
    for (const s of steps.slice(0, idx)) assert.ok(s.achieved >= 0.95 * s.offered, `${s.offered}/s held: ${show}`);
    if (idx > 0) assert.equal(result.below, steps[idx - 1]);

    // Above saturation the backlog shows in the response time, measured from the intended send
    // time: one connection sends request k no earlier than k × 5 ms, though it was due at k / 800 s,
    // so the request at rank 99 % waited at least 3.75 ms × its index (2.75 ms leaves room for
    // timer rounding)
    const top = steps[3];
    const bound = 2.75 * (0.99 * top.completed - 1);
    assert.ok(top.p99 >= bound, `p99 ${top.p99} ms at 800/s, at least ${bound.toFixed(1)} ms of queueing`);
    assert.ok(top.unsent > 0, 'requests that could not be sent are reported');
  });
});
