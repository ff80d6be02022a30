'use strict';

/**
 * One gateway polling a fleet, in its own process so its RSS and CPU are its own:
 *   node fleet-child.js <port> <devices> <hzList> <warmupMs> <measureMs> [workers] [resourceLimits JSON]
 * Each device owns one connection to the server at <port> and has one job (FC3 ×10), at the rates in
 * hzList (comma-separated, assigned round-robin). Devices and jobs run in a WorkerPool (worker
 * threads; the default count, cores − 1, unless [workers] says otherwise). After the warm-up, each
 * job's measured interval starts with pool.reset(job), a few jobs at a time: resetting 1,000 jobs
 * in one message blocks their thread for 2.5–9 ms (inline, 5 tries; 9–27 ms when each reset made
 * new histograms), a stall the measured interval would then count as dispatch lag of the requests
 * queued behind it. CPU and RSS
 * are sampled from the last reset on; pool.stop() then delivers each job's interval (its own start
 * and end). The worker threads' collections over the measured interval are counted too
 * (gc-profile.js: scavenges, mark-compacts, pause p99 and max over the threads), and
 * [resourceLimits] (e.g. '{"maxYoungGenerationSizeMb":64}') sets the threads' heap limits, to
 * measure what they change. Prints one JSON line.
 */

const path = require('node:path');
// as `nines run` does, before the modules load
require('../../gateway/base/v8-flags').setProcessFlags();
const { createHist, encode, stats, decode } = require('./hist');
const { askWorkers } = require('./gc-profile');

const ROOT = path.join(__dirname, '..', '..');
const [port, devices, hzList, warmupMs, measureMs, workersArg, limitsArg] = process.argv.slice(2);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** jobs reset per step, and the pause between steps (ms): ~10 × 40 µs of work, then the thread polls again */
const RESET_BATCH = 10;
const RESET_PAUSE_MS = 2;

async function main () {
  const { WorkerPool, buildDeviceSpec, buildJobSpec } = require(ROOT);
  const hz = hzList.split(',').map(Number);
  const n = Number(devices);
  const workerCount = workersArg === undefined || workersArg === 'auto' ? 'auto' : Number(workersArg);
  const devs = Array.from({ length: n }, (_, i) => buildDeviceSpec({ name: `dev-${i}`, target: `modbus+tcp://127.0.0.1:${port}?unitId=1`, timeoutMs: 1000 }));
  const specs = devs.map((device, i) => buildJobSpec({
    name: `job-${i}`,
    read: { fc: 3, address: 0, quantity: 10 },
    ratePerSec: hz[i % hz.length],
    intervalMs: 3600000
  }, { device }));
  if (global.gc) global.gc();
  const rssBefore = process.memoryUsage().rss;
  // hlog: each summary also carries the lag histogram, encoded once on the pool's thread
  const resourceLimits = limitsArg ? JSON.parse(limitsArg) : undefined;
  const pool = new WorkerPool({ mode: 'worker', workers: workerCount, hlog: true, resourceLimits, execArgv: ['--require', require.resolve('./gc-profile')] });
  const summaries = [];
  let errors = 0;
  pool.on('summary', (job, payload, hlog) => summaries.push({ job, payload, hlog }));
  pool.on('job-error', () => { errors++; });
  for (const d of devs) pool.addDevice(d);
  for (const s of specs) pool.startJob(s);
  await sleep(Math.min(200, Number(warmupMs)));
  await askWorkers('start', 'watch');
  await sleep(Math.max(0, Number(warmupMs) - 200));
  const resetAt = new Map();
  for (let i = 0; i < specs.length; i += RESET_BATCH) {
    for (const s of specs.slice(i, i + RESET_BATCH)) { resetAt.set(s.name, Date.now()); pool.reset(s.name); }
    await sleep(RESET_PAUSE_MS);
  }
  await askWorkers('mark', 'watch');
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let rssMax = 0;
  const sampler = setInterval(() => { rssMax = Math.max(rssMax, process.memoryUsage().rss); }, 100);
  await sleep(Number(measureMs));
  clearInterval(sampler);
  const wallUs = Number(process.hrtime.bigint() - t0) / 1e3;
  const cpu = process.cpuUsage(cpu0);
  const rss = Math.max(rssMax, process.memoryUsage().rss);
  const gcs = await askWorkers('stop', 'watch');
  await pool.stop(10000);
  const lag = createHist();
  const resp = createHist();
  const perJob = new Map(); // job → its slots and measured time (epoch ms)
  let failed = 0;
  for (const { job, payload, hlog } of summaries) {
    // a job whose phase puts an interval end inside the run (phase × 1 h < the run) also reports its warm-up: not measured
    if (payload.start < resetAt.get(job)) continue;
    const l = hlog && hlog.find((i) => i.tag === 'lag');
    if (l) lag.add(decode(l.encoded));
    resp.add(decode(payload.hist));
    const j = perJob.get(job) || { count: 0, start: payload.start, end: payload.end };
    j.count += payload.count;
    j.start = Math.min(j.start, payload.start);
    j.end = Math.max(j.end, payload.end);
    perJob.set(job, j);
    failed += payload.errors + payload.timeouts;
  }
  // Each job from its reset as its thread applied it to the moment polling stopped. Not to each
  // interval's own end: the last intervals are closed one after another (1,000 encodings) well after
  // every schedule stopped; the first one closed is the closest to the stop.
  const stoppedAt = Math.min(...[...perJob.values()].map((j) => j.end));
  let perSec = 0;
  for (const j of perJob.values()) if (stoppedAt > j.start) perSec += j.count / ((stoppedAt - j.start) / 1000);
  const offered = specs.reduce((a, s) => a + s.ratePerSec, 0);
  const workersUsed = pool.workerCount;
  process.stdout.write(JSON.stringify({
    devices: n,
    workers: workersUsed,
    offered,
    reqPerSec: perSec,
    cpuPct: (cpu.user + cpu.system) / wallUs * 100,
    rssMB: rss / 2 ** 20,
    bytesPerJob: (rss - rssBefore) / n,
    lagP99Ns: stats(lag).p99,
    lagMaxNs: stats(lag).max,
    responseP99Ns: stats(resp).p99,
    errors: failed + errors,
    // the worker threads' collections over the measured interval (summed; pauses: the worst thread)
    scavenges: gcs.reduce((a, g) => a + g.scavenges, 0),
    markCompacts: gcs.reduce((a, g) => a + g.markCompacts, 0),
    gcPauseP99Ns: Math.max(0, ...gcs.map((g) => g.pauseP99Us)) * 1000,
    gcPauseMaxNs: Math.max(0, ...gcs.map((g) => g.pauseMaxUs)) * 1000,
    gcPauseTotalNs: gcs.reduce((a, g) => a + g.pauseTotalUs, 0) * 1000,
    hist: encode(resp)
  }) + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
}).finally(() => setTimeout(() => process.exit(), 200).unref()); // eslint-disable-line n/no-process-exit
