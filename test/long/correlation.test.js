'use strict';

/**
 * The correlation drill of test/faults/correlation.test.js for 30 minutes (npm run test:long;
 * NINES_LONG_CORRELATION_MS sets another length): not one published value is another request's,
 * over every transport, and the run says how many requests it covered.
 */

const assert = require('node:assert/strict');
const { runDrill } = require('../faults/correlation');

const DURATION_MS = Number(process.env.NINES_LONG_CORRELATION_MS) || 30 * 60 * 1000;

describe('long correlation drill', function () {
  this.timeout(DURATION_MS + 120000);

  it(`publishes no wrong value in ${Math.round(DURATION_MS / 60000)} min of late replies on every transport`, async () => {
    const { jobs, requests } = await runDrill({ durationMs: DURATION_MS, seed: Number(process.env.NINES_LONG_CORRELATION_SEED) || 11 });
    let values = 0;
    let timeouts = 0;
    for (const [job, j] of jobs) {
      values += j.values;
      timeouts += j.timeouts;
      console.log(`      ${job.padEnd(14)} values ${j.values}  wrong ${j.wrong.length}  ok ${j.ok}  timeouts ${j.timeouts}  errors ${j.errors}  skipped ${j.skipped}`);
    }
    console.log(`      covered: ${requests} requests (${timeouts} timed out), ${values} value messages checked`);
    const wrong = [...jobs].filter(([, j]) => j.wrong.length !== 0).map(([job, j]) => `${job}: ${j.wrong.length}, e.g. ${j.wrong[0]}`);
    assert.deepEqual(wrong, []);
    for (const [job, j] of jobs) assert.ok(j.values > 0 && j.timeouts > 0, `${job}: ${JSON.stringify({ ...j, wrong: j.wrong.length })}`);
  });
});
