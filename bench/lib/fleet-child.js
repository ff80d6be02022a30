'use strict';

/**
 * One gateway polling a fleet, in its own process so its RSS and CPU are its own:
 *   node fleet-child.js <port> <devices> <hzList> <warmupMs> <measureMs> [workers]
 * Each device owns one connection to the server at <port> and has one job (FC3 ×10), at the rates in
 * hzList (comma-separated, assigned round-robin). Devices and jobs run in a WorkerPool (worker
 * threads; the default count, cores − 1, unless [workers] says otherwise). After the warm-up, pool.reset() starts the measured interval; CPU and RSS are
 * sampled over it; pool.stop() then delivers each job's last interval. Prints one JSON line.
 */

const path = require('node:path');
const { createHist, encode, stats, decode } = require('./hist');

const ROOT = path.join(__dirname, '..', '..');
const [port, devices, hzList, warmupMs, measureMs, workersArg] = process.argv.slice(2);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

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
  // hlog: each summary also carries the lag histogram, encoded once in its worker
  const pool = new WorkerPool({ mode: 'worker', workers: workerCount, hlog: true });
  const summaries = [];
  let errors = 0;
  pool.on('summary', (job, payload, hlog) => summaries.push({ payload, hlog }));
  pool.on('job-error', () => { errors++; });
  for (const d of devs) pool.addDevice(d);
  for (const s of specs) pool.startJob(s);
  await sleep(Number(warmupMs));
  pool.reset();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let rssMax = 0;
  const sampler = setInterval(() => { rssMax = Math.max(rssMax, process.memoryUsage().rss); }, 100);
  await sleep(Number(measureMs));
  clearInterval(sampler);
  const wallUs = Number(process.hrtime.bigint() - t0) / 1e3;
  const cpu = process.cpuUsage(cpu0);
  const rss = Math.max(rssMax, process.memoryUsage().rss);
  await pool.stop(10000);
  const lag = createHist();
  const resp = createHist();
  let count = 0;
  let failed = 0;
  for (const { payload, hlog } of summaries) {
    const l = hlog && hlog.find((i) => i.tag === 'lag');
    if (l) lag.add(decode(l.encoded));
    resp.add(decode(payload.hist));
    count += payload.count;
    failed += payload.errors + payload.timeouts;
  }
  const offered = specs.reduce((a, s) => a + s.ratePerSec, 0);
  const workersUsed = pool.workerCount;
  process.stdout.write(JSON.stringify({
    devices: n,
    workers: workersUsed,
    offered,
    reqPerSec: count / (wallUs / 1e6),
    cpuPct: (cpu.user + cpu.system) / wallUs * 100,
    rssMB: rss / 2 ** 20,
    bytesPerJob: (rss - rssBefore) / n,
    lagP99Ns: stats(lag).p99,
    lagMaxNs: stats(lag).max,
    responseP99Ns: stats(resp).p99,
    errors: failed + errors,
    hist: encode(resp)
  }) + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
}).finally(() => setTimeout(() => process.exit(), 200).unref()); // eslint-disable-line n/no-process-exit
