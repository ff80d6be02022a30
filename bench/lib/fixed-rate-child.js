'use strict';

/**
 * Question 15's nines client, in its own process so the bench can pin it (`taskset -c`): `nines
 * probe` at a fixed rate on one Modbus TCP connection (FC3 ×10 from address 0, unit 1), in a worker
 * thread as `nines probe --rate` runs it, with the wait asked for (`precision` spin or sleep) and
 * `inflight` requests in flight. Latency from the intended send time, catch-up `burst` as the C
 * reference client's (a request whose time has passed goes as soon as the connection is free).
 *
 *   node fixed-rate-child.js '<json>'   {port, ratePerSec, precision, inflight, durationMs, warmup}
 *
 * Besides the response-time histogram it reports the probe's own dispatch lag (intended → actual
 * write, the worker's lag histogram) and the process's CPU over the measured run (the run's own
 * cpuPct: process.cpuUsage over its measured part, main thread, worker and libuv together).
 * The last stdout line is the JSON result.
 */

const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
// as the `nines` command does, before the modules load
const flags = require(path.join(ROOT, 'gateway/base/v8-flags'));
flags.setProcessFlags();
// and, as `nines probe` does, a measuring process's (v8-flags.js setMeasuringFlags)
flags.setMeasuringFlags();

async function main () {
  const o = JSON.parse(process.argv[2]);
  const { runProbe } = require(path.join(ROOT, 'gateway/measure/probe'));
  const probe = runProbe({
    target: `modbus+tcp://127.0.0.1:${o.port}?unitId=1`,
    read: { fc: 3, address: 0, quantity: 10 },
    connections: [1],
    inflight: [o.inflight || 1],
    ratePerSec: o.ratePerSec,
    precision: o.precision,
    policy: 'burst',
    durationMs: o.durationMs,
    warmup: o.warmup,
    timeoutMs: 1000,
    inWorker: true
  });
  const { runs } = await probe.promise;
  const r = runs[0];
  const failed = r.errors + r.timeouts;
  const first = Object.entries(r.errorsByCode)[0];
  const toNs = (msValue) => (typeof msValue === 'number' ? Math.round(msValue * 1e6) : null);
  process.stdout.write(JSON.stringify({
    hist: r.hist,
    count: r.ok + failed,
    errors: failed,
    elapsedNs: Math.round(r.elapsedMs * 1e6),
    reqPerSec: r.ratePerSec,
    offered: o.ratePerSec,
    fellBehind: r.fellBehind,
    precision: r.precision,
    lagP50Ns: toNs(r.lag.p50),
    lagP99Ns: toNs(r.lag.p99),
    lagMaxNs: toNs(r.lag.max),
    // the probe's own figure: the whole process's CPU over the measured run (probe.js cpuPct)
    cpuPct: r.cpuPct,
    firstError: first ? `${first[0]} ${first[1].sample}` : undefined,
    effectiveInflight: r.inflightEffective
  }) + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
