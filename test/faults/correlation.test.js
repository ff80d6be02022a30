'use strict';

/**
 * Issue 18's critical defect, replayed the way a user sees it: no published value is another
 * request's, on any transport, while replies come late at random before and after the timeout
 * (correlation.js). The same drill runs for 30 minutes in test/long/correlation.test.js.
 */

const assert = require('node:assert/strict');
const { runDrill } = require('./correlation');

describe('correlation: late replies never become another register\'s value (issue 18)', function () {
  this.timeout(60000);

  it('publishes only values that the polled register holds, on serial RTU, RTU over TCP, Modbus TCP (1 and 8 in flight), a line of units and ASCII', async () => {
    const { jobs, requests, gatewayLog } = await runDrill({ durationMs: 10000 });
    const wrong = [...jobs].filter(([, j]) => j.wrong.length !== 0).map(([job, j]) => `${job}: ${j.wrong.length} wrong, e.g. ${j.wrong[0]}`);
    assert.deepEqual(wrong, [], `wrong values published:\n${wrong.join('\n')}\n\ngateway log (tail):\n${gatewayLog.slice(-3000)}`);
    for (const [job, j] of jobs) {
      // every job was polled, answered, and checked, and the faults bit: its requests timed out too
      assert.ok(j.values >= 5, `${job}: only ${j.values} values to check`);
      assert.ok(j.ok >= 5, `${job}: only ${j.ok} requests answered`);
    }
    // a unit's summaries name the unit they polled, not the line's first (issue 19)
    for (const u of [1, 2, 3]) {
      assert.deepEqual([...jobs.get(`line-u${u}`).targets].map((t) => new URL(t.replace(/^[^:]+:/, 'http:')).searchParams.get('unitId')), [String(u)]);
    }
    const timeouts = [...jobs.values()].reduce((n, j) => n + j.timeouts, 0);
    const byDevice = (prefix) => [...jobs].filter(([job]) => job.startsWith(prefix)).reduce((n, [, j]) => n + j.timeouts, 0);
    for (const device of ['rtu-', 'rtutcp-', 'tcp1-', 'tcp8-', 'line-', 'ed560-']) assert.ok(byDevice(device) > 0, `no timeout on ${device}: the late replies did not happen`);
    assert.ok(requests > 500, `${requests} requests`);
    assert.ok(timeouts > 20, `${timeouts} timeouts`);
  });
});
