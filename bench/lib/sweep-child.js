'use strict';

/**
 * Question 4's nines side, in its own process so the bench can pin it (`taskset -c`): `nines sweep`
 * as the command runs it (runSweep in a worker thread of its own, the V8 settings `nines` sets
 * first) on one Modbus TCP connection, FC3 ×10 from address 0, unit 1, with the sweep's own
 * defaults (precision spin, catch-up burst) and a warm-up.
 *
 *   node sweep-child.js '<json>'   {port, rates, stepMs, warmup}
 *
 * Prints one JSON line: per step the response-time histogram (encoded), the achieved rate, the
 * dispatch lag p99 and the failures; and the process's CPU over the steps (process.cpuUsage from
 * the warm-up's end, the first step's start, to the last step's end), as % of one core.
 */

const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
// as the `nines` command does, before the modules load
require(path.join(ROOT, 'gateway/base/v8-flags')).setProcessFlags();

async function main () {
  const o = JSON.parse(process.argv[2]);
  const { runSweep } = require(path.join(ROOT, 'gateway/measure/sweep'));
  const sweep = runSweep({
    target: `modbus+tcp://127.0.0.1:${o.port}?unitId=1`,
    read: { fc: 3, address: 0, quantity: 10 },
    rates: o.rates,
    stepMs: o.stepMs,
    workers: 1,
    warmup: o.warmup,
    timeoutMs: 1000
  });
  const steps = [];
  sweep.on('step', (s) => steps.push({
    rate: s.offered,
    hist: s.hist,
    reqPerSec: s.achieved,
    lagP99Ns: s.lag.p99 === null ? null : Math.round(s.lag.p99 * 1e6),
    errors: s.errors + s.timeouts,
    unsent: s.unsent,
    thread: s.thread
  }));
  const result = await sweep.promise;
  process.stdout.write(JSON.stringify({ steps, saturatedAt: result.saturation ? result.saturation.offered : null }) + '\n');
}

main().catch((err) => { process.stderr.write(`${err.stack || err}\n`); process.exitCode = 1; });
