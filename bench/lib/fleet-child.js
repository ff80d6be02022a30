'use strict';

/**
 * One gateway polling a fleet, in its own process so its RSS and CPU are its own:
 *   node fleet-child.js <port> <devices> <hzList> <warmupMs> <measureMs>
 * Each device is one connection to the server at <port> with its own job (FC3 ×10), at the rates in
 * hzList (comma-separated, assigned round-robin). The jobs run in a WorkerPool (worker threads, the
 * default worker count). After the warm-up, pool.reset() starts the measured interval; CPU and RSS are
 * sampled over it; pool.stop() then delivers each job's last interval. Prints one JSON line.
 */

const path = require('node:path');
const { createHist, encode, stats, decode } = require('./hist');

const ROOT = path.join(__dirname, '..', '..');
const [port, devices, hzList, warmupMs, measureMs] = process.argv.slice(2);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main () {
  const { WorkerPool } = require(path.join(ROOT, 'gateway/workers/pool'));
  const { encodeHistogram } = require(path.join(ROOT, 'gateway/latency'));
  const hz = hzList.split(',').map(Number);
  const n = Number(devices);
  const specs = Array.from({ length: n }, (_, i) => ({
    name: `dev-${i}`,
    target: `modbus+tcp://127.0.0.1:${port}?unitId=1`,
    read: { fc: 3, address: 0, quantity: 10 },
    ratePerSec: hz[i % hz.length],
    connections: 1,
    policy: 'capped',
    values: { mode: 'off' },
    device: { timeoutMs: 1000 }
  }));
  if (global.gc) global.gc();
  const rssBefore = process.memoryUsage().rss;
  const pool = new WorkerPool({ mode: 'worker', intervalMs: 3600000 });
  const snaps = [];
  let errors = 0;
  pool.on('snapshot', (job, snap) => snaps.push(snap));
  pool.on('error', () => { errors++; });
  await pool.start(specs);
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
  for (const s of snaps) {
    if (s.lag) lag.add(decode(encodeHistogram(s.lag)));
    if (s.response) resp.add(decode(encodeHistogram(s.response)));
    count += s.count;
    failed += s.errors + s.timeouts;
  }
  const offered = specs.reduce((a, s) => a + s.ratePerSec, 0);
  process.stdout.write(JSON.stringify({
    devices: n,
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
