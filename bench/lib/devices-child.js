'use strict';

/**
 * One gateway process (one WorkerPool, default worker count) whose devices own their connections,
 * in its own process so each measurement starts from nothing (question 9):
 *
 *   node devices-child.js shared <port> <jobs> <ratePerJob> <maxConnections> <warmupMs> <measureMs> <intervalMs>
 *     one device on <port> with maxConnections connections, <jobs> poll jobs on it (FC3 ×10 each);
 *   node devices-child.js devices <port,port,…> <ratePerJob> <warmupMs> <measureMs> <intervalMs>
 *     one device per port (maxConnections 1), one poll job on each.
 *
 * Jobs are built with the poll defaults (policy skip) and summarise every <intervalMs>. After the
 * warm-up, pool.reset() starts the measured interval and the child prints "MEASURING" on its own
 * line (the parent may fault a device then); half-way, it counts the established connections each
 * server port has (`ss`, server side) and reads each device's health. pool.stop() then delivers
 * every job's last interval. Last line: one JSON object with per-job figures:
 *   rate achieved over the measured summaries (ok + errors + timeouts per second), skipped slots,
 *   response-time percentiles (ns, from the intended send time) and the job's histogram, seq
 *   contiguity over every summary (0, 1, 2, …) and time contiguity of the measured ones (each
 *   interval starts where the one before ended).
 */

const path = require('node:path');
// as `nines run` does, before the modules load
require('../../gateway/base/v8-flags').setProcessFlags();
const { execFile } = require('node:child_process');
const { createHist, encode, stats, decode } = require('./hist');

const ROOT = path.join(__dirname, '..', '..');
const OP = Object.freeze({ fc: 3, address: 0, quantity: 10 });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** @returns {{devices: Array<{name: string, port: number, maxConnections: number}>, jobs: Array<{name: string, device: string, rate: number}>, warmupMs: number, measureMs: number, intervalMs: number}} */
function plan (argv) {
  const [mode, ...a] = argv;
  if (mode === 'shared') {
    const [port, jobs, rate, maxConnections, warmupMs, measureMs, intervalMs] = a.map(Number);
    return {
      devices: [{ name: 'plc', port, maxConnections }],
      jobs: Array.from({ length: jobs }, (_, i) => ({ name: `job-${i}`, device: 'plc', rate })),
      warmupMs, measureMs, intervalMs
    };
  }
  if (mode === 'devices') {
    const ports = a[0].split(',').map(Number);
    const [rate, warmupMs, measureMs, intervalMs] = a.slice(1).map(Number);
    return {
      devices: ports.map((port, i) => ({ name: `dev-${i}`, port, maxConnections: 1 })),
      jobs: ports.map((_, i) => ({ name: `job-${i}`, device: `dev-${i}`, rate })),
      warmupMs, measureMs, intervalMs
    };
  }
  throw new Error(`devices-child: unknown mode ${JSON.stringify(mode)} (shared, devices)`);
}

/**
 * Established TCP connections whose local port is `port` (the server's side of each connection).
 * @param {number} port
 * @returns {Promise<number|null>} null when ss is missing or fails
 */
function serverConnections (port) {
  return new Promise((resolve) => {
    execFile('ss', ['-Htn', 'state', 'established', `( sport = :${port} )`], { timeout: 5000 }, (err, stdout) => {
      if (err) resolve(null);
      else resolve(stdout.split('\n').filter((l) => l.trim() !== '').length);
    });
  });
}

/**
 * One job's figures from its summaries.
 * @param {{name: string, rate: number, device: string}} job
 * @param {object[]} list its summary payloads in arrival order
 * @param {number} resetAt epoch ms of pool.reset()
 */
function jobFigures (job, list, resetAt) {
  const seqs = list.map((p) => p.seq);
  const seqContiguous = seqs.every((s, i) => s === i);
  const measured = list.filter((p) => p.start >= resetAt);
  let timeGaps = 0;
  for (let i = 1; i < measured.length; i++) if (measured[i].start !== measured[i - 1].end) timeGaps++;
  const hist = createHist();
  let sent = 0;
  let ok = 0;
  let failed = 0;
  let skipped = 0;
  for (const p of measured) {
    hist.add(decode(p.hist));
    sent += p.ok + p.errors + p.timeouts;
    ok += p.ok;
    failed += p.errors + p.timeouts;
    skipped += p.skipped;
  }
  const spanMs = measured.length ? measured[measured.length - 1].end - measured[0].start : 0;
  const achieved = spanMs > 0 ? sent / (spanMs / 1000) : 0;
  const s = stats(hist);
  return {
    job: job.name,
    device: job.device,
    rate: job.rate,
    achieved,
    rateRatio: achieved / job.rate,
    ok,
    failed,
    skipped,
    intervals: measured.length,
    summaries: list.length,
    seqContiguous,
    timeGaps,
    p50: s.p50,
    p99: s.p99,
    p999: s.p999,
    max: s.max,
    count: s.count,
    hist: encode(hist)
  };
}

async function main () {
  const { WorkerPool, buildDeviceSpec, buildJobSpec } = require(ROOT);
  const p = plan(process.argv.slice(2));
  const pool = new WorkerPool({ mode: 'worker' });
  const byJob = new Map(p.jobs.map((j) => [j.name, []]));
  const jobErrors = {};
  const health = {};
  pool.on('summary', (job, payload) => { if (byJob.has(job)) byJob.get(job).push(payload); });
  pool.on('job-error', (job, err) => { const k = `${job}: ${err.code}`; jobErrors[k] = (jobErrors[k] || 0) + 1; });
  pool.on('health', (device, h) => { health[device] = h; });
  const specs = new Map();
  for (const d of p.devices) {
    const spec = buildDeviceSpec({ name: d.name, target: `modbus+tcp://127.0.0.1:${d.port}?unitId=1`, maxConnections: d.maxConnections, timeoutMs: 1000 });
    specs.set(d.name, spec);
    pool.addDevice(spec);
  }
  for (const j of p.jobs) {
    pool.startJob(buildJobSpec({ name: j.name, read: OP, ratePerSec: j.rate, intervalMs: p.intervalMs }, { device: specs.get(j.device), purpose: 'poll' }));
  }
  await sleep(p.warmupMs);
  const resetAt = Date.now();
  pool.reset();
  process.stdout.write('MEASURING\n');
  await sleep(p.measureMs / 2);
  const seen = await Promise.all(p.devices.map((d) => serverConnections(d.port)));
  const healthMid = Object.fromEntries(p.devices.map((d) => [d.name, health[d.name] ? { state: health[d.name].state, open: health[d.name].connections.open } : null]));
  await sleep(p.measureMs / 2);
  await pool.stop(10000);
  process.stdout.write(JSON.stringify({
    workers: pool.workerCount,
    devices: p.devices.map((d, i) => ({ name: d.name, port: d.port, maxConnections: d.maxConnections, serverConnections: seen[i], health: healthMid[d.name] })),
    jobs: p.jobs.map((j) => jobFigures(j, byJob.get(j.name), resetAt)),
    jobErrors
  }) + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
}).finally(() => setTimeout(() => process.exit(), 200).unref()); // eslint-disable-line n/no-process-exit
