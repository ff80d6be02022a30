'use strict';

/**
 * Issue 18's critical defect, replayed the way a user sees it: no published value is another
 * request's, on any transport, while replies come late at random before and after the timeout
 * (correlation.js). The same drill runs for 30 minutes in test/long/correlation.test.js.
 *
 * The RTU lines carry a wire trace (wire-analysis.js), so that a wrong value is traced to its cause.
 * On a machine busy enough (the suite beside a second copy of itself, on two cores) the drill's own
 * simulators or PTY relay can be descheduled past the window (timeout + quiet period): a reply that
 * late reaches the gateway's port when any serial master would take it for the next read's. Such a
 * value is excused, and shown; one of the gateway's own making never is. And the drill must be able to
 * fail: with the line's hold after a timeout taken away, it finds the defect.
 */

const assert = require('node:assert/strict');
const { runDrill } = require('./correlation');
const { formatWire, unexcused } = require('./wire-analysis');

describe('correlation: late replies never become another register\'s value (issue 18)', function () {
  this.timeout(90000);

  it('publishes only values that the polled register holds, on serial RTU, RTU over TCP, Modbus TCP (1 and 8 in flight), a line of units and ASCII', async () => {
    const { jobs, requests, gatewayLog, wire } = await runDrill({ durationMs: 10000, trace: true });
    const wrong = [...jobs].filter(([, j]) => j.wrong.length !== 0).map(([job, j]) => `${job}: ${j.wrong.length} wrong, e.g. ${j.wrong[0]}`);
    // a wrong value beyond what any master can tell apart is shown, not hidden
    if (wrong.length !== 0) console.log(`      excused by the wire trace:\n${formatWire(wire).replace(/^/gm, '        ')}`);
    assert.deepEqual(unexcused(jobs, wire), [], `wrong values published:\n${wrong.join('\n')}\n${formatWire(wire)}\n\ngateway log (tail):\n${gatewayLog.slice(-3000)}`);
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
    // the trace saw the RTU lines' replies
    for (const d of wire) assert.ok(d.replies > 50, `${d.device}: ${d.replies} replies traced`);
  });

  it('finds the defect when the line is not held after a timeout', async () => {
    const { jobs, wire } = await runDrill({ durationMs: 5000, trace: true, breakHold: true });
    const faults = unexcused(jobs, wire);
    assert.ok(faults.some((f) => f.includes('early-write')), `no write inside the window found:\n${formatWire(wire)}`);
    assert.ok([...jobs].some(([job, j]) => job.startsWith('rtu') && j.wrong.length > 0), 'no wrong value published');
  });
});
