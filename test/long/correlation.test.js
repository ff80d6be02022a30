'use strict';

/**
 * The correlation drill of test/faults/correlation.test.js for 30 minutes (npm run test:long;
 * NINES_LONG_CORRELATION_MS sets another length), with the wire trace on (wire-analysis.js): every RTU
 * reply read after a newer request was written is traced to its cause. On a busy machine the drill's
 * own simulators and PTY relay can be descheduled past the window (timeout + quiet period), and a reply
 * that late cannot be told from the next read's by any master; so the drill asserts that no wrong value
 * has a cause of the gateway's own (a write inside the window, or a reply that reached the port inside it
 * and was read after the next write), that every wrong value is accounted for by a traced reply, and says
 * how many requests it covered.
 */

const assert = require('node:assert/strict');
const { runDrill } = require('../faults/correlation');
const { formatWire, unexcused } = require('../faults/wire-analysis');

const DURATION_MS = Number(process.env.NINES_LONG_CORRELATION_MS) || 30 * 60 * 1000;

describe('long correlation drill', function () {
  this.timeout(DURATION_MS + 180000);

  it(`publishes no wrong value of the gateway's making in ${Math.round(DURATION_MS / 60000)} min of late replies on every transport`, async () => {
    const { jobs, requests, wire, traceKept } = await runDrill({ durationMs: DURATION_MS, seed: Number(process.env.NINES_LONG_CORRELATION_SEED) || 11, trace: true });
    let values = 0;
    let timeouts = 0;
    for (const [job, j] of jobs) {
      values += j.values;
      timeouts += j.timeouts;
      console.log(`      ${job.padEnd(14)} values ${j.values}  wrong ${j.wrong.length}  ok ${j.ok}  timeouts ${j.timeouts}  errors ${j.errors}  skipped ${j.skipped}`);
    }
    console.log(`      covered: ${requests} requests (${timeouts} timed out), ${values} value messages checked`);
    console.log(formatWire(wire).replace(/^/gm, '      '));
    console.log(`      wire trace kept in ${traceKept}`);
    assert.deepEqual(unexcused(jobs, wire), []);
    for (const [job, j] of jobs) assert.ok(j.values > 0 && j.timeouts > 0, `${job}: ${JSON.stringify({ ...j, wrong: j.wrong.length })}`);
  });
});
